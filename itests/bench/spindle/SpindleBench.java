import dev.strata.api.BlockDevice;
import dev.strata.api.Requests;
import dev.strata.testkit.internal.spindle.DiskModel;
import dev.strata.testkit.internal.spindle.SpindleTarget;

import java.nio.ByteBuffer;
import java.util.Random;

/**
 * The spindle target in real time: sequential and random 4 KiB reads and writes at queue depth 1,
 * sequential 1 MiB, and the sequential/random ratio, next to what the model predicts. Not a test:
 * run it with {@code itests/bench/spindle/run.sh [seconds-per-workload] [device-size-GiB]}.
 */
public class SpindleBench {
    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        long size = (args.length > 1 ? Long.parseLong(args[1]) : 100) << 30;
        DiskModel.Params params = DiskModel.Params.defaults(size);
        System.out.printf("spindle bench: %d GiB modelled disk, %.0f rpm, seek %.1f ms, %.0f MB/s, %.1f s per workload%n",
                size >> 30, params.rpm(), params.seekNanos() / 1e6, params.bytesPerSecond() / 1e6, seconds);
        System.out.printf("%-28s %12s %12s %12s %12s%n", "workload", "IOPS", "MB/s", "model IOPS", "model MB/s");
        double seq4 = run("sequential 4 KiB read", params, size, 4096, false, seconds);
        double rnd4 = run("random 4 KiB read", params, size, 4096, true, seconds);
        run("random 4 KiB write", params, size, 4096, true, seconds);
        run("sequential 1 MiB read", params, size, 1 << 20, false, seconds);
        System.out.printf("sequential/random 4 KiB ratio: %.1f (measured IOPS)%n", seq4 / rnd4);
    }

    private static double run(String name, DiskModel.Params params, long size, int len, boolean random, double seconds) throws Exception {
        SpindleTarget disk = SpindleTarget.of("spindle", new NullDevice(size), params);
        DiskModel model = new DiskModel(params);
        Random r = new Random(1);
        ByteBuffer buf = ByteBuffer.allocate(len);
        long blocks = size / len;
        long n = 0;
        long modelNanos = 0;
        long start = System.nanoTime();
        long end = start + (long) (seconds * 1e9);
        long pos = 0;
        while (System.nanoTime() < end) {
            long off = random ? (r.nextLong() & Long.MAX_VALUE) % blocks * len : pos;
            pos = (pos + len) % (blocks * len);
            buf.clear();
            if (name.contains("write")) {
                disk.write(off, buf, 0);
            } else {
                disk.read(off, buf);
            }
            modelNanos += model.service(off, len);
            n++;
        }
        double elapsed = (System.nanoTime() - start) / 1e9;
        double iops = n / elapsed;
        System.out.printf("%-28s %12.0f %12.1f %12.0f %12.1f%n", name, iops, iops * len / 1e6, n / (modelNanos / 1e9),
                n * (double) len / (modelNanos / 1e9) / 1e6);
        return iops;
    }

    /** A device that stores nothing: reads return zeroes (the bench measures the model, not memory). */
    static final class NullDevice implements BlockDevice {
        private final long size;

        NullDevice(long size) {
            this.size = size;
        }

        public long size() {
            return size;
        }

        public int blockSize() {
            return 4096;
        }

        public void read(long offset, ByteBuffer dst) {
            Requests.check(this, offset, dst.remaining());
            while (dst.hasRemaining()) {
                dst.put((byte) 0);
            }
        }

        public void write(long offset, ByteBuffer src, int flags) {
            Requests.check(this, offset, src.remaining());
            src.position(src.limit());
        }

        public void flush() {
        }

        public void discard(long offset, long length) {
        }

        public void writeZeroes(long offset, long length, int flags) {
        }

        public void close() {
        }
    }
}
