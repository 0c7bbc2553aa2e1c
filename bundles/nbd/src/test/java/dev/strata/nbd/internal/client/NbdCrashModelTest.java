package dev.strata.nbd.internal.client;

import dev.strata.api.BlockDevice;
import dev.strata.nbd.internal.server.Export;
import dev.strata.nbd.internal.server.NbdServer;
import dev.strata.testsupport.crash.CrashModelProperties;
import dev.strata.testsupport.crash.CrashTestSubject;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
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
    private record OverNbd(NbdTarget target, NbdServer server) implements BlockDevice {
        @Override
        public long size() {
            return target.size();
        }

        @Override
        public int blockSize() {
            return target.blockSize();
        }

        @Override
        public void read(long offset, ByteBuffer dst) throws IOException {
            target.read(offset, dst);
        }

        @Override
        public void write(long offset, ByteBuffer src, int flags) throws IOException {
            target.write(offset, src, flags);
        }

        @Override
        public void flush() throws IOException {
            target.flush();
        }

        @Override
        public void discard(long offset, long length) throws IOException {
            target.discard(offset, length);
        }

        @Override
        public void writeZeroes(long offset, long length, int flags) throws IOException {
            target.writeZeroes(offset, length, flags);
        }

        @Override
        public boolean canFastZero() {
            return target.canFastZero();
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
