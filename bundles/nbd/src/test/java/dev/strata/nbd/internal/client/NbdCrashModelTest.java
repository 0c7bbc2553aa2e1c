package dev.strata.nbd.internal.client;

import dev.strata.api.BlockDevice;
import dev.strata.nbd.internal.server.Export;
import dev.strata.nbd.internal.server.NbdServer;
import dev.strata.testsupport.crash.CrashModelProperties;
import dev.strata.testsupport.crash.CrashTestSubject;
import dev.strata.testsupport.target.ForwardingBlockDevice;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;

/**
 * The crash model over the whole NBD path: an {@code nbd} target talking to our server, which
 * exports a crashable device. Durability must survive the trip: a write acknowledged with FUA,
 * or before an acknowledged flush, is on the device after any crash.
 */
class NbdCrashModelTest extends CrashModelProperties {

    @Override
    protected CrashTestSubject subject() {
        return new CrashTestSubject() {
            @Override
            public String name() {
                return "nbd (client → server → crashable device)";
            }

            @Override
            public List<DeviceSpec> devices() {
                return List.of(new DeviceSpec("exported", 1 << 20, 4096));
            }

            @Override
            public BlockDevice create(List<BlockDevice> devices) throws IOException {
                return open(devices.get(0));
            }

            @Override
            public BlockDevice reopen(List<BlockDevice> devices) throws IOException {
                return open(devices.get(0));
            }
        };
    }

    private static BlockDevice open(BlockDevice lower) throws IOException {
        NbdServer server = new NbdServer();
        try {
            Export e = server.addExport("crash", "", lower, new InetSocketAddress("127.0.0.1", 0), false);
            NbdTarget t = new NbdTarget("remote", NbdUri.parse("nbd://127.0.0.1:" + e.port() + "/crash"), 10_000, 1);
            return new OverNbd(t, server);
        } catch (IOException | RuntimeException ex) {
            server.close();
            throw ex;
        }
    }

    /** The nbd target, closing its server with it. */
    private static final class OverNbd extends ForwardingBlockDevice {
        private final NbdTarget target;
        private final NbdServer server;

        OverNbd(NbdTarget target, NbdServer server) {
            super(target);
            this.target = target;
            this.server = server;
        }

        @Override
        public void close() throws IOException {
            try {
                target.close();
            } finally {
                server.close();
            }
        }
    }
}
