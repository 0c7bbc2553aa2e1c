package dev.strata.nbd.testing;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * An {@code nbdkit} server on 127.0.0.1 for the client tests: started in the foreground on a
 * free port, ready once it has written its pid file (nbdkit writes it after it listens), killed
 * on {@link #close()} (and with the JVM, by {@code --exit-with-parent}).
 */
public final class Nbdkit implements AutoCloseable {
    private final Process process;
    private final Path log;
    public final int port;

    private Nbdkit(Process process, Path log, int port) {
        this.process = process;
        this.log = log;
        this.port = port;
    }

    /** {@code nbdkit [serverOptions…] PLUGIN [pluginArgs…]}, e.g. {@code "--tls=require", "file", "file=x.img"}. */
    public static Nbdkit start(Path dir, String... args) throws IOException, InterruptedException {
        Tools.require("nbdkit", "nbdkit");
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        Path pid = dir.resolve("nbdkit-" + port + ".pid");
        Path log = dir.resolve("nbdkit-" + port + ".log");
        List<String> cmd = new ArrayList<>(List.of("nbdkit", "--foreground", "--exit-with-parent",
                "--ipaddr", "127.0.0.1", "--port", Integer.toString(port), "--pidfile", pid.toString()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!Files.exists(pid) || Files.size(pid) == 0) {
            if (!p.isAlive() || System.nanoTime() > deadline) {
                p.destroyForcibly();
                fail(String.join(" ", cmd) + " did not start:\n" + Files.readString(log));
            }
            p.waitFor(20, TimeUnit.MILLISECONDS);
        }
        return new Nbdkit(p, log, port);
    }

    public String log() throws IOException {
        return Files.readString(log);
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }
}
