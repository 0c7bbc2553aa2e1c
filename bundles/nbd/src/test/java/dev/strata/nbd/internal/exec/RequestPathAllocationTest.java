package dev.strata.nbd.internal.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.BlockDevice;
import dev.strata.nbd.internal.protocol.Nbd;
import dev.strata.nbd.internal.protocol.Request;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Steady-state requests allocate nothing: payloads and read buffers come from the
 * {@link BufferPool}, the request object is reused, and the executor holds no per-request
 * state. Counted with the thread's allocated bytes (com.sun.management.ThreadMXBean) over many
 * 4 KiB writes, 4 KiB reads and 1 MiB writes; a count, not a time. A large write reaches the
 * device as one call (no splitting on the way).
 */
class RequestPathAllocationTest {
    static final int MIB = 1 << 20;
    /** Less than one small object (a ByteBuffer view is about 48-64 bytes) per request. */
    static final double MAX_BYTES_PER_REQUEST = 16;

    /** A RAM device that allocates nothing per call (absolute bulk copies) and counts writes. */
    static final class FlatDevice implements BlockDevice {
        final ByteBuffer data = ByteBuffer.allocateDirect(64 * MIB);
        long writes;
        int largestWrite;

        @Override
        public long size() {
            return data.capacity();
        }

        @Override
        public int blockSize() {
            return 4096;
        }

        @Override
        public void read(long offset, ByteBuffer dst) {
            int n = dst.remaining();
            dst.put(dst.position(), data, (int) offset, n);
            dst.position(dst.position() + n);
        }

        @Override
        public void write(long offset, ByteBuffer src, int flags) {
            int n = src.remaining();
            data.put((int) offset, src, src.position(), n);
            src.position(src.limit());
            writes++;
            largestWrite = Math.max(largestWrite, n);
        }

        @Override
        public void flush() {
        }

        @Override
        public void discard(long offset, long length) {
        }

        @Override
        public void writeZeroes(long offset, long length, int flags) {
        }

        @Override
        public void close() {
        }
    }

    /** Replies that give read buffers back to the pool, as the connection's writer does once sent. */
    static final class Sink implements Replies {
        final BufferPool pool;
        long ok;
        long errors;

        Sink(BufferPool pool) {
            this.pool = pool;
        }

        @Override
        public void ok(Request request) {
            ok++;
        }

        @Override
        public void error(Request request, int errno, String message) {
            errors++;
        }

        @Override
        public void data(Request request, ByteBuffer data) {
            ok++;
            pool.release(data);
        }

        @Override
        public void extents(Request request, int contextId, int[] lengths, int[] flags, int count) {
            ok++;
        }
    }

    @Test
    void steadyStateRequestsAllocateNothing() throws Exception {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        FlatDevice dev = new FlatDevice();
        BufferPool pool = new BufferPool(64L * MIB);
        RequestExecutor exec = new RequestExecutor(dev, false, true, false, pool, new IoCounters(), new Object());
        Sink out = new Sink(pool);
        Request r = new Request();
        SplittableRandom rnd = new SplittableRandom(3);
        long blocks = dev.size() / 4096 - 256;
        run(exec, pool, out, r, rnd, blocks, 20_000); // the JIT compiles the path; the pool fills
        long tid = Thread.currentThread().getId();
        long before = mx.getThreadAllocatedBytes(tid);
        int n = 30_000;
        run(exec, pool, out, r, rnd, blocks, n);
        long allocated = mx.getThreadAllocatedBytes(tid) - before;
        double perRequest = (double) allocated / n;
        assertEquals(0, out.errors, "no request failed");
        assertTrue(perRequest < MAX_BYTES_PER_REQUEST,
                "the request path allocated " + allocated + " bytes over " + n + " requests (" + perRequest + " per request)");
    }

    @Test
    void aOneMiBWriteIsOneDeviceWrite() throws Exception {
        FlatDevice dev = new FlatDevice();
        BufferPool pool = new BufferPool(64L * MIB);
        RequestExecutor exec = new RequestExecutor(dev, false, true, false, pool, new IoCounters(), new Object());
        Sink out = new Sink(pool);
        Request r = new Request();
        for (int i = 0; i < 8; i++) {
            r.set(0, Nbd.CMD_WRITE, i, (long) i * MIB, MIB);
            ByteBuffer payload = pool.acquire(MIB);
            exec.execute(r, payload, out);
            pool.release(payload);
        }
        assertEquals(8, dev.writes, "one device write per 1 MiB request");
        assertEquals(MIB, dev.largestWrite);
        assertEquals(8, out.ok);
    }

    /** n requests: a third 4 KiB writes, a third 4 KiB reads, a third 1 MiB writes (as a worker runs them). */
    static void run(RequestExecutor exec, BufferPool pool, Sink out, Request r, SplittableRandom rnd, long blocks, int n)
            throws Exception {
        for (int i = 0; i < n; i++) {
            long off = rnd.nextLong(blocks) * 4096;
            int kind = i % 3;
            int len = kind == 2 ? MIB : 4096;
            r.set(0, kind == 1 ? Nbd.CMD_READ : Nbd.CMD_WRITE, i, off, len);
            if (exec.check(r) != 0) {
                throw new AssertionError("check refused " + r);
            }
            if (kind == 1) {
                exec.execute(r, null, out);
            } else {
                ByteBuffer payload = pool.acquire(len);
                payload.position(len).flip();
                exec.execute(r, payload, out);
                pool.release(payload);
            }
        }
    }
}
