package dev.strata.mirror.internal.log.zk;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.mirror.internal.Devices;
import dev.strata.mirror.internal.io.MirrorTarget;
import dev.strata.testsupport.crash.CrashableDevice;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Session loss: the ZooKeeper server restarted and a session expired under verified writes (I/O
 * pauses, nothing is lost), and fencing: a node whose marks another node took over writes nothing
 * to the legs until it has rejoined, then resyncs its own marks.
 */
class ZooKeeperSessionTest extends ZkFixture {
    static final int SIZE = 4 << 20;
    final CrashableDevice legA = new CrashableDevice("a", SIZE, 4096);
    final CrashableDevice legB = new CrashableDevice("b", SIZE, 4096);
    final ExecutorService pool = Executors.newCachedThreadPool();

    @AfterEach
    void stopPool() {
        pool.shutdownNow();
    }

    long stat(MirrorTarget m, String k) {
        return Long.parseLong(m.status().get(k));
    }

    /** One writer of 4 KiB blocks (each holding its offset and a sequence), with the acknowledged values kept. */
    final class Writer implements Runnable {
        final MirrorTarget m;
        final Map<Long, Long> acked = new HashMap<>();
        final AtomicLong count = new AtomicLong();
        final AtomicBoolean stop = new AtomicBoolean();
        final Random rnd = new Random(7);

        Writer(MirrorTarget m) {
            this.m = m;
        }

        @Override
        public void run() {
            try {
                long seq = 0;
                while (!stop.get()) {
                    long off = (long) rnd.nextInt(SIZE / 4096) * 4096;
                    ByteBuffer b = ByteBuffer.allocate(4096);
                    b.putLong(0, off).putLong(8, ++seq);
                    m.write(off, b, 0);
                    synchronized (acked) {
                        acked.put(off, seq);
                    }
                    if (count.incrementAndGet() % 16 == 0) {
                        m.flush();
                    }
                }
            } catch (Exception e) {
                throw new AssertionError("a write failed: " + e.getMessage(), e);
            }
        }

        void verify() throws Exception {
            for (CrashableDevice leg : List.of(legA, legB)) {
                for (Map.Entry<Long, Long> e : acked.entrySet()) {
                    ByteBuffer b = ByteBuffer.allocate(4096);
                    leg.read(e.getKey(), b);
                    assertEquals(e.getValue(), b.getLong(8), leg + " at " + e.getKey());
                }
            }
            assertLegsEqual();
        }
    }

    void assertLegsEqual() throws Exception {
        ByteBuffer x = ByteBuffer.allocate(SIZE);
        ByteBuffer y = ByteBuffer.allocate(SIZE);
        legA.read(0, x);
        legB.read(0, y);
        assertArrayEquals(x.array(), y.array(), "the legs hold the same bytes");
    }

    @Test
    void aServerRestartPausesWritesAndLosesNothing() throws Exception {
        ZooKeeperLog log = log("n1");
        MirrorTarget m = mirror("n1", log, List.of(legA, legB), false);
        Writer w = new Writer(m);
        Future<?> f = pool.submit(w);
        await("writes before the restart", () -> w.count.get() > 100);
        long during;
        server.stop();
        try {
            await("the node to see the server gone", () -> !m.status().get("zk_session").equals("member"));
            await("a write or its commit to wait for the session", () -> stat(m, "zk_paused") > 0);
            during = w.count.get();
        } finally {
            server.start(); // also for the next tests if this one failed
        }
        await("writes after the restart", () -> w.count.get() > during + 100);
        w.stop.set(true);
        f.get();
        m.flush();
        assertEquals("member", m.status().get("zk_session"));
        w.verify();
        assertMarksMatch(log, m);
    }

    @Test
    void anExpiredSessionRejoinsWritesPauseAndNothingIsLost() throws Exception {
        ZooKeeperLog log = log("n1");
        MirrorTarget m = mirror("n1", log, List.of(legA, legB), false);
        Writer w = new Writer(m);
        Future<?> f = pool.submit(w);
        await("writes before the expiry", () -> w.count.get() > 100);
        expireSession(log);
        await("the rejoin", () -> stat(m, "zk_rejoins") == 1);
        long after = w.count.get();
        await("writes after the rejoin", () -> w.count.get() > after + 100);
        w.stop.set(true);
        f.get();
        m.flush();
        assertEquals(1, stat(m, "zk_session_expiries"));
        assertEquals(0, stat(m, "zk_fenced"), "nobody took the marks over: no resync of them");
        w.verify();
        assertMarksMatch(log, m);
    }

    /** The marks in ZooKeeper are the ones the mirror holds (read by another client). */
    void assertMarksMatch(ZooKeeperLog log, MirrorTarget m) throws Exception {
        m.suspend();
        ZooKeeper zk = client();
        BitSet inZk = new BitSet();
        ZnodeLayout z = new ZnodeLayout(path);
        for (int c = 0; c < ZnodeLayout.chunks(log.regions); c++) {
            ZnodeLayout.readChunk(zk.getData(z.chunk("n1", c), false, null), c, log.regions, inZk);
        }
        assertEquals(m.dirtyRegions(), inZk);
    }

    @Test
    void aFencedNodeWritesNothingUntilItRejoinedThenResyncsItsOwnMarks() throws Exception {
        ZooKeeperLog logA = log("A");
        ZooKeeperLog logB = log("B");
        Devices.Counting aA = new Devices.Counting(legA);
        Devices.Counting aB = new Devices.Counting(legB);
        List<String> violations = new ArrayList<>();
        Devices.IoHook fenced = offset -> {
            if (!logA.joined() || !logA.session.connected()) {
                violations.add("node A wrote at " + offset + " without its membership");
            }
        };
        aA.beforeWrite = fenced;
        aB.beforeWrite = fenced;
        MirrorTarget a = mirror("A", logA, List.of(aA, aB), true);
        MirrorTarget b = mirror("B", logB, List.of(legA, legB), true);
        for (int r = 0; r < 4; r++) {
            a.write(r * REGION, ByteBuffer.allocate(4096).putLong(0, r + 1), 0);
        }
        // A's write to region 2 reached only leg a when A's session died (it was in flight)
        legA.write(2 * REGION, ByteBuffer.allocate(4096).putLong(0, 99), 0);
        expireSession(logA);
        await("A to see its session expired", () -> a.status().get("zk_session").equals("expired"));
        b.clusterRunOnce();
        assertEquals(1, stat(b, "zk_recovered_nodes"));
        assertEquals(4, stat(b, "zk_recovered_regions"));
        assertEquals(4, stat(b, "resync_pending"), "B resyncs exactly A's marked regions");
        b.resyncAll(); // A has no session, so no member to wait for: B copies at once
        assertEquals(0, stat(b, "resync_pending"));
        Future<?> hot = pool.submit(() -> {
            a.write(4096, ByteBuffer.allocate(4096).putLong(0, 7), 0); // region 0 is hot for A
            return null;
        });
        hot.get();
        assertEquals(List.of(), violations);
        assertEquals(1, stat(a, "zk_fenced"), "A found its marks taken over when it rejoined");
        a.clusterRunOnce();
        assertEquals(4, stat(a, "resync_pending"), "A resyncs its own marks again: its writes may have raced B's copy");
        // A publishes its resync; B holds the regions back and says so; then A copies
        await("A's resync", () -> step(b::clusterRunOnce) && step(() -> a.resyncRunOnce(64)) && stat(a, "resync_pending") == 0);
        a.flush();
        b.flush();
        assertLegsEqual();
        ByteBuffer got = ByteBuffer.allocate(4096);
        legB.read(4096, got);
        assertEquals(7, got.getLong(0), "A's write after rejoining is on both legs");
    }

    private interface Step {
        Object run() throws Exception;
    }

    private static boolean step(Step s) {
        try {
            s.run();
            return true;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void aChangedFencingTokenFailsTheCommitsCheckAndTheNodeRejoins() throws Exception {
        ZooKeeperLog log = log("A");
        MirrorTarget m = mirror("A", log, List.of(legA, legB), true);
        m.write(0, ByteBuffer.allocate(4096), 0);
        ZooKeeper zk = client();
        zk.setData(path + "/nodes/A", "taken".getBytes(), -1); // as a recoverer's takeover would
        m.write(5 * REGION, ByteBuffer.allocate(4096), 0); // a new mark: the multi's check fails
        assertEquals(1, stat(m, "zk_fenced"));
        assertEquals(1, stat(m, "zk_rejoins"));
        BitSet want = new BitSet();
        want.set(0);
        want.set(5);
        BitSet inZk = new BitSet();
        ZnodeLayout.readChunk(zk.getData(new ZnodeLayout(path).chunk("A", 0), false, null), 0, log.regions, inZk);
        assertEquals(want, inZk, "both marks are in ZooKeeper after the rejoin");
        assertTrue(m.clusterRunOnce(), "the node resyncs its own marks");
    }
}
