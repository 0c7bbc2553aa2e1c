package dev.strata.nbd.testing;

import dev.strata.api.BlockDevice;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.TargetContext;
import dev.strata.api.TargetFactory;
import dev.strata.nbd.internal.server.Export;
import dev.strata.nbd.internal.server.NbdServer;
import java.net.InetSocketAddress;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Runs the NBD server alone, for benchmarks before the distribution exists:
 * {@code ExportMain TYPE key=value… [--port P] [--name N] [--workers W]} builds a target with the
 * driver's factory found on the class path (file, direct, memory), exports it on 127.0.0.1 and
 * serves until stdin closes or the process is killed.
 */
public final class ExportMain {
    private static final Map<String, String> FACTORIES = Map.of(
            "file", "dev.strata.driver.file.internal.FileTargetFactory",
            "direct", "dev.strata.driver.direct.internal.DirectTargetFactory",
            "memory", "dev.strata.driver.memory.internal.MemoryTargetFactory");

    public static void main(String[] args) throws Exception {
        String type = args[0];
        Map<String, String> targetArgs = new LinkedHashMap<>();
        int port = 10809;
        String name = "disk";
        int workers = NbdServer.Settings.defaults().workers();
        for (int i = 1; i < args.length; i++) {
            switch (args[i]) {
                case "--port" -> port = Integer.parseInt(args[++i]);
                case "--name" -> name = args[++i];
                case "--workers" -> workers = Integer.parseInt(args[++i]);
                default -> {
                    int eq = args[i].indexOf('=');
                    targetArgs.put(args[i].substring(0, eq), args[i].substring(eq + 1));
                }
            }
        }
        TargetFactory f = (TargetFactory) Class.forName(FACTORIES.get(type)).getDeclaredConstructor().newInstance();
        Map<String, String> a = Map.copyOf(targetArgs);
        BlockDevice device = f.create(new TargetContext() {
            @Override
            public String deviceName() {
                return "bench";
            }

            @Override
            public Map<String, String> arguments() {
                return a;
            }

            @Override
            public BlockDevice lowerDevice(String n) {
                throw new InvalidArgumentException("no lower devices here");
            }
        });
        NbdServer.Settings d = NbdServer.Settings.defaults();
        NbdServer server = new NbdServer(new NbdServer.Settings(workers, d.handshakeTimeoutMillis(), d.inputBuffer(),
                d.poolBudget()));
        Export e = server.addExport(name, type + " " + a, device, new InetSocketAddress("127.0.0.1", port), false);
        System.out.println("ready nbd://127.0.0.1:" + e.port() + "/" + name);
        System.out.flush();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            try {
                device.close();
            } catch (Exception ex) {
                // exiting anyway
            }
        }));
        while (System.in.read() >= 0) {
            // serve until stdin closes
        }
        System.exit(0);
    }
}
