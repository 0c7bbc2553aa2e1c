package dev.strata.mirror.internal.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.BlockDevice;
import dev.strata.api.InvalidArgumentException;
import dev.strata.mirror.internal.log.CoreLog;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The mirror's I/O path (docs/benchmarks.md, "Mirror (issue 15)"): a write runs on both legs at
 * the same time, each calling thread keeps one helper thread per further leg, reads and writes
 * into marked regions allocate (next to) nothing, and least-loaded reads avoid a busy leg;
 * {@code write_fanout=caller} writes every leg on the calling thread.
 */
class IoPathTest {
    static final int SIZE = 8 << 20;

    /** A leg in memory that allocates nothing per request; {@code gate} runs before each write. */
    static final class Mem implements BlockDevice {
        final ByteBuffer data = ByteBuffer.allocateDirect(SIZE);
        volatile Gate gate;

        interface Gate {
            void enter() throws IOException;
        }

        @Override
        public long size() {
            return SIZE;
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
        public void write(long offset, ByteBuffer src, int flags) throws IOException {
            Gate g = gate;
            if (g != null) {
                g.enter();
            }
            int n = src.remaining();
            data.put((int) offset, src, src.position(), n);
            src.position(src.limit());
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

    static MirrorTarget mirror(Mem a, Mem b, ReadPolicy policy) throws IOException {
        return MirrorTarget.open("m", List.of("a", "b"), List.of(a, b), new CoreLog(), 64 * 1024,
                MirrorTarget.Options.defaults().withNosync(true).withManual(true).withReadPolicy(policy));
    }

    static void await(CountDownLatch l) throws IOException {
        try {
            if (!l.await(30, TimeUnit.SECONDS)) {
                throw new IOException("the other leg never started its write: the legs are written one after the other");
            }
        } catch (InterruptedException e) {
            throw new InterruptedIOException();
        }
    }

    @Test
    void bothLegsWriteAtTheSameTime() throws Exception {
        Mem a = new Mem();
        Mem b = new Mem();
        MirrorTarget m = mirror(a, b, ReadPolicy.ROUND_ROBIN);
        // each leg's write waits until the other leg's write has started: only parallel writes finish
        CountDownLatch both = new CountDownLatch(2);
        Mem.Gate g = () -> {
            both.countDown();
            await(both);
        };
        a.gate = g;
        b.gate = g;
        ByteBuffer src = ByteBuffer.allocateDirect(1 << 20);
        src.put(0, (byte) 7);
        m.write(0, src, 0);
        assertEquals(0, src.remaining(), "the caller's buffer is consumed");
        assertEquals(7, a.data.get(0));
        assertEquals(7, b.data.get(0));
        m.close();
    }

    @Test
    void oneHelperThreadPerCallerAndLegReused() throws Exception {
        Mem a = new Mem();
        Mem b = new Mem();
        MirrorTarget m = mirror(a, b, ReadPolicy.ROUND_ROBIN);
        ByteBuffer src = ByteBuffer.allocateDirect(4096);
        for (int i = 0; i < 500; i++) {
            m.write((i % 16) * 4096L, src.clear(), 0);
        }
        assertEquals(1, helpers("m", "b"), "one helper for leg b for this thread, however many writes");
        assertEquals(0, helpers("m", "a"), "the first leg is written on the caller's thread");
        m.close();
    }

    static long helpers(String mirror, String leg) {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals("mirror-" + mirror + "-leg-" + leg)).count();
    }

    @Test
    void readsAllocateNothingAndWritesOnlyTheSecondLegsBufferView() throws Exception {
        var tm = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        Mem a = new Mem();
        Mem b = new Mem();
        MirrorTarget m = mirror(a, b, ReadPolicy.ROUND_ROBIN);
        ByteBuffer buf = ByteBuffer.allocateDirect(4096);
        int n = 20_000;
        for (int round = 0; round < 3; round++) { // the first rounds warm the code up
            long r0 = tm.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < n; i++) {
                m.read((i % 512) * 4096L, buf.clear());
            }
            long reads = tm.getCurrentThreadAllocatedBytes() - r0;
            long w0 = tm.getCurrentThreadAllocatedBytes();
            long h0 = helperAllocated(tm);
            for (int i = 0; i < n; i++) {
                m.write((i % 512) * 4096L, buf.clear(), 0); // 32 regions, marked by the first writes
            }
            long writes = tm.getCurrentThreadAllocatedBytes() - w0 + helperAllocated(tm) - h0;
            if (round == 2) {
                assertTrue(reads < n, "reads allocated " + reads + " bytes for " + n + " reads");
                // one ByteBuffer view per write for the second leg (two legs cannot share a buffer's position)
                assertTrue(writes < 128L * n, "writes allocated " + writes + " bytes for " + n + " writes");
            }
        }
        m.close();
    }

    static long helperAllocated(com.sun.management.ThreadMXBean tm) {
        long sum = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("mirror-m-leg-")) {
                sum += tm.getThreadAllocatedBytes(t.getId());
            }
        }
        return sum;
    }

    @Test
    void leastLoadedReadsAvoidALegBusyWithAWriteAndShareEqualLegs() throws Exception {
        Mem a = new Mem();
        Mem b = new Mem();
        MirrorTarget m = mirror(a, b, ReadPolicy.LEAST_LOADED);
        ByteBuffer buf = ByteBuffer.allocateDirect(4096);
        for (int i = 0; i < 100; i++) {
            m.read(0, buf.clear());
        }
        assertEquals("50", m.status().get("reads.a"), "equal legs share the reads");
        assertEquals("50", m.status().get("reads.b"));
        // a write held inside leg b: b has a request in flight, a has none
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        b.gate = () -> {
            entered.countDown();
            await(release);
        };
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Thread writer = new Thread(() -> {
            try {
                m.write(4096, ByteBuffer.allocateDirect(4096), 0);
            } catch (Throwable t) {
                failed.set(t);
            }
        });
        writer.start();
        assertTrue(entered.await(30, TimeUnit.SECONDS), "the write reached leg b");
        // leg a's part of the write may still be finishing on the fan-out's other thread (then
        // both legs have one request in flight and the reads are shared): wait until it is done
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (m.legLoad(0) != 0) {
            assertTrue(System.nanoTime() < deadline, "leg a's part of the write never finished");
            Thread.onSpinWait();
        }
        assertEquals(1, m.legLoad(1), "the held write is in flight on leg b");
        for (int i = 0; i < 100; i++) {
            m.read(8192, buf.clear());
        }
        release.countDown();
        writer.join(30_000);
        assertEquals(null, failed.get());
        assertEquals("150", m.status().get("reads.a"), "every read went to the idle leg");
        assertEquals("50", m.status().get("reads.b"));
        // round robin takes turns whatever the load
        m.message("read_policy", "round_robin");
        for (int i = 0; i < 100; i++) {
            m.read(8192, buf.clear());
        }
        assertEquals("200", m.status().get("reads.a"));
        assertEquals("100", m.status().get("reads.b"));
        m.close();
    }

    @Test
    void callerFanOutWritesEveryLegOnTheCallingThreadAndParallelComesBack() throws Exception {
        Mem a = new Mem();
        Mem b = new Mem();
        MirrorTarget m = mirror(a, b, ReadPolicy.ROUND_ROBIN);
        assertEquals("parallel", m.status().get("write_fanout"), "the default");
        m.message("write_fanout", "caller");
        assertEquals("caller", m.status().get("write_fanout"));
        AtomicReference<Thread> onA = new AtomicReference<>();
        AtomicReference<Thread> onB = new AtomicReference<>();
        a.gate = () -> onA.set(Thread.currentThread());
        b.gate = () -> onB.set(Thread.currentThread());
        ByteBuffer src = ByteBuffer.allocateDirect(1 << 20);
        src.put(0, (byte) 5).put((1 << 20) - 1, (byte) 6);
        m.write(1 << 20, src, 0);
        assertSame(Thread.currentThread(), onA.get(), "leg a written by the caller");
        assertSame(Thread.currentThread(), onB.get(), "leg b written by the caller too, no handoff");
        assertEquals(0, src.remaining(), "the caller's buffer is consumed");
        for (Mem leg : List.of(a, b)) {
            assertEquals(5, leg.data.get(1 << 20), "each leg got the whole write");
            assertEquals(6, leg.data.get((2 << 20) - 1));
        }
        // back to parallel: each leg's write waits for the other's to start, so only a handoff finishes
        m.message("write_fanout", "parallel");
        CountDownLatch both = new CountDownLatch(2);
        Mem.Gate g = () -> {
            both.countDown();
            await(both);
        };
        a.gate = g;
        b.gate = g;
        m.write(0, src.clear(), 0);
        m.close();
    }

    @Test
    void callerFanOutWritesTheOtherLegsWhenOneFails() throws Exception {
        Mem a = new Mem();
        Mem b = new Mem();
        MirrorTarget m = mirror(a, b, ReadPolicy.ROUND_ROBIN);
        m.message("write_fanout", "caller");
        a.gate = () -> {
            throw new IOException("leg a is gone");
        };
        ByteBuffer src = ByteBuffer.allocateDirect(4096);
        src.put(0, (byte) 9);
        m.write(8192, src, 0);
        assertEquals(9, b.data.get(8192), "leg b written although leg a failed first");
        assertEquals("out_of_sync", m.status().get("leg.a"));
        assertEquals("in_sync", m.status().get("leg.b"));
        m.close();
    }

    @Test
    void anUnknownWriteFanoutIsOneLineAndChangesNothing() throws Exception {
        MirrorTarget m = mirror(new Mem(), new Mem(), ReadPolicy.ROUND_ROBIN);
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> m.message("write_fanout", "fast"));
        assertEquals("mirror: write_fanout=fast is unknown; use parallel or caller", e.getMessage());
        assertEquals("parallel", m.status().get("write_fanout"));
        m.close();
    }
}
