package dev.strata.mirror.internal.log.zk;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.mirror.internal.Devices;
import dev.strata.mirror.internal.io.MirrorTarget;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A write of one live node to a region another node is resyncing is ordered with the copy
 * (dm-raid1's "remote recovering" check on ZooKeeper): node A dies with region 5 marked and its
 * last write on leg a only; node B takes A over and copies region 5 from leg a to leg b while
 * node C writes into region 5. C's write waits for B's copy, so the older copy never overwrites
 * it on leg b. A member that never acknowledges the resync is waited for until its session has
 * expired; then it is fenced and writes nothing until it has rejoined and resynced its own marks.
 */
class RemoteResyncTest extends ZkFixture {
    static final long SIZE = 80 * REGION;
    static final int R = 5;
    final ExecutorService pool = Executors.newCachedThreadPool();
    Path fa;
    Path fb;

    @BeforeEach
    void files() throws IOException {
        Path dir = Files.createTempDirectory(Files.createDirectories(Path.of("target", "zk")), "remote-resync");
        fa = dir.resolve("leg-a.img");
        fb = dir.resolve("leg-b.img");
    }

    @AfterEach
    void stopPool() {
        pool.shutdownNow();
    }

    @Test
    void aWriteOfAnotherNodeWaitsForTheRecoverersCopyAndBothLegsEndWithIt() throws Exception {
        MirrorTarget a = mirror("A", log("A"), List.of(leg(fa), leg(fb)), true);
        ZooKeeperLog logA = lastLog;
        // B's copy to leg b is held at the moment it writes (it has read leg a already)
        CountDownLatch reached = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Devices.Counting bLegB = new Devices.Counting(leg(fb));
        MirrorTarget b = mirror("B", log("B"), List.of(leg(fa), bLegB), true);
        MirrorTarget c = mirror("C", log("C"), List.of(leg(fa), leg(fb)), true);

        a.write(R * REGION, block(1), 0);
        onLeg(fa, R * REGION, 2); // A's last write reached leg a only when A died
        deadNode(logA, "A");

        assertTrue(b.clusterRunOnce(), "B took node A over");
        assertEquals("1", b.status().get("resync_pending"), "region 5, A's only mark");
        bLegB.beforeWrite = offset -> {
            if (offset / REGION == R) {
                reached.countDown();
                awaitQuietly(release);
            }
        };
        Future<Integer> copy = pool.submit(() -> {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            int n;
            while ((n = b.resyncRunOnce(64)) == 0 && System.nanoTime() < deadline) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5)); // until C acknowledged the resync
            }
            return n;
        });
        await("B's copy of region 5 to be under way (after C held its writes back)", () -> {
            run(c::clusterRunOnce);
            return reached.getCount() == 0;
        });
        assertEquals("1", c.status().get("zk_remote_resync_regions"), "C holds region 5 back");

        Future<?> write = pool.submit(() -> {
            c.write(R * REGION, block(3), 0);
            return null;
        });
        await("C's write to wait for B's resync (or to be done, wrongly)", () -> "1".equals(c.status().get("writes_held_back"))
                || write.isDone());
        assertFalse(write.isDone(), "C's write waits while B copies");
        assertEquals("1", c.status().get("writes_held_back"));
        assertNotEquals(3, onLeg(fa, R * REGION), "C's write is on no leg yet");
        assertNotEquals(3, onLeg(fb, R * REGION), "C's write is on no leg yet");

        release.countDown();
        assertEquals(1, copy.get(60, TimeUnit.SECONDS), "B copied region 5");
        await("C's write after the copy", () -> {
            run(c::clusterRunOnce); // the shrunk entry lets it go
            return write.isDone();
        });
        write.get();
        assertEquals(3, onLeg(fa, R * REGION), "C's write on leg a");
        assertEquals(3, onLeg(fb, R * REGION), "C's write on leg b: the older copy did not overwrite it");
        byte[] x = Files.readAllBytes(fa);
        byte[] y = Files.readAllBytes(fb);
        assertArrayEquals(Arrays.copyOfRange(x, (int) (R * REGION), (int) ((R + 1) * REGION)),
                Arrays.copyOfRange(y, (int) (R * REGION), (int) ((R + 1) * REGION)), "region 5 is the same on both legs");
        assertEquals("0", b.status().get("resync_pending"));
        ZooKeeper zk = client();
        assertEquals(0, ZnodeLayout.parseRecovering(zk.getData(path + "/recovering", false, null)).size(),
                "no resync is published any more");
    }

    @Test
    void aMemberThatNeverAcknowledgesIsWaitedForUntilItsSessionExpiresThenFencedAndWritesNothing() throws Exception {
        MirrorTarget a = mirror("A", log("A"), List.of(leg(fa), leg(fb)), true);
        ZooKeeperLog logA = lastLog;
        MirrorTarget b = mirror("B", log("B"), List.of(leg(fa), leg(fb)), true);
        Devices.Counting mA = new Devices.Counting(leg(fa));
        Devices.Counting mB = new Devices.Counting(leg(fb));
        MirrorTarget m = mirror("M", log("M"), List.of(mA, mB), true);
        ZooKeeperLog logM = lastLog;
        List<String> violations = new ArrayList<>();
        Devices.IoHook fenced = offset -> {
            if (!logM.joined() || !logM.session.connected()) {
                violations.add("node M wrote at " + offset + " without its membership");
            }
        };
        mA.beforeWrite = fenced;
        mB.beforeWrite = fenced;
        m.write(7 * REGION, block(10), 0); // M has a mark of its own (region 7)

        a.write(R * REGION, block(1), 0);
        onLeg(fa, R * REGION, 2);
        deadNode(logA, "A");
        assertTrue(b.clusterRunOnce(), "B took node A over");

        // M is live and never runs its round: B copies nothing, however often it tries
        for (int i = 0; i < 20; i++) {
            assertEquals(0, b.resyncRunOnce(64));
        }
        assertEquals("1", b.status().get("resync_pending"));
        assertEquals("M", b.status().get("zk_resync_waiting_for"));
        assertEquals(2, onLeg(fa, R * REGION));
        assertEquals(1, onLeg(fb, R * REGION), "nothing copied to leg b");

        expireSession(logM);
        await("B to copy once M's session is gone", () -> run(() -> b.resyncRunOnce(64)) && "0".equals(b.status().get("resync_pending")));
        assertEquals("1", b.status().get("zk_resync_fenced_members"), "M was fenced");
        assertEquals(2, onLeg(fb, R * REGION), "region 5 copied from leg a");

        // M's next write: it rejoins first, finds itself fenced, and resyncs its own marks
        m.write(7 * REGION + 4096, block(11), 0);
        assertEquals(List.of(), violations);
        assertEquals("1", m.status().get("zk_fenced"), "M found its token changed when it rejoined");
        m.clusterRunOnce();
        assertEquals("1", m.status().get("resync_pending"), "M resyncs region 7 itself");
        await("M's resync (B acknowledges it)", () -> run(b::clusterRunOnce) && run(m::clusterRunOnce)
                && run(() -> m.resyncRunOnce(64)) && "0".equals(m.status().get("resync_pending")));
        assertArrayEquals(Files.readAllBytes(fa), Files.readAllBytes(fb), "both legs are identical");
        assertEquals(11, onLeg(fb, 7 * REGION + 4096));
    }

    @Test
    void aNodeThatMissedThePublicationCannotMarkAPublishedRegionItsCommitsCheckFailsAndTheWriteWaits() throws Exception {
        MirrorTarget a = mirror("A", log("A"), List.of(leg(fa), leg(fb)), true);
        ZooKeeperLog logA = lastLog;
        MirrorTarget b = mirror("B", log("B"), List.of(leg(fa), leg(fb)), true);
        MirrorTarget c = mirror("C", log("C"), List.of(leg(fa), leg(fb)), true);
        a.write(R * REGION, block(1), 0);
        onLeg(fa, R * REGION, 2);
        deadNode(logA, "A");
        assertTrue(b.clusterRunOnce(), "B took node A over");
        assertEquals(0, b.resyncRunOnce(64), "B published region 5 and waits for C");
        assertEquals("0", c.status().get("zk_remote_resync_regions"), "C has not run its round: it has not seen it");

        // C's first write into region 5 needs a mark: the commit checks the version C applied, which is old
        Future<?> write = pool.submit(() -> {
            c.write(R * REGION + 4096, block(3), 0);
            return null;
        });
        await("C's write to be held back after its commit's check failed", () -> "1".equals(c.status().get("writes_held_back"))
                || write.isDone());
        assertFalse(write.isDone());
        assertEquals("1", c.status().get("zk_commits_rechecked"));
        assertEquals("1", c.status().get("zk_remote_resync_regions"), "C holds region 5 back now");
        assertEquals(0, onLeg(fa, R * REGION + 4096), "the write is on no leg");

        await("B's copy (C acknowledges in its round) and then C's write", () -> run(c::clusterRunOnce)
                && run(() -> b.resyncRunOnce(64)) && write.isDone());
        write.get();
        assertEquals(3, onLeg(fa, R * REGION + 4096));
        assertEquals(3, onLeg(fb, R * REGION + 4096));
        assertEquals(2, onLeg(fb, R * REGION), "A's last write copied to leg b");
        assertArrayEquals(Files.readAllBytes(fa), Files.readAllBytes(fb), "both legs are identical");
    }

    @Test
    void onlyTheWindowBeingCopiedIsHeldBackAWriteBeyondItGoesOnAndIsCopiedAlong() throws Exception {
        MirrorTarget a = mirror("A", log("A"), List.of(leg(fa), leg(fb)), true);
        ZooKeeperLog logA = lastLog;
        CountDownLatch reached = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Devices.Counting bLegB = new Devices.Counting(leg(fb));
        MirrorTarget b = mirror("B", log("B"), List.of(leg(fa), bLegB), true);
        MirrorTarget c = mirror("C", log("C"), List.of(leg(fa), leg(fb)), true);
        int far = (int) (SIZE / REGION) - 1; // beyond the first window of 64 regions
        for (int r = 0; r <= far; r++) {
            a.write(r * REGION, block(1), 0);
        }
        onLeg(fa, far * REGION, 2); // A's last write to the far region reached leg a only
        deadNode(logA, "A");
        assertTrue(b.clusterRunOnce(), "B took node A over");
        bLegB.beforeWrite = offset -> {
            if (offset == 0) {
                reached.countDown();
                awaitQuietly(release);
            }
        };
        Future<Integer> copy = pool.submit(() -> {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            int n;
            while ((n = b.resyncRunOnce(8)) == 0 && System.nanoTime() < deadline) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
            }
            return n;
        });
        await("B's copy of region 0 to be under way", () -> {
            run(c::clusterRunOnce);
            return reached.getCount() == 0;
        });
        assertEquals("64", c.status().get("zk_remote_resync_regions"), "C holds back B's window only");
        c.write(far * REGION + 4096, block(3), 0); // outside the window: does not wait
        assertEquals("0", c.status().get("writes_held_back"));
        assertEquals(3, onLeg(fb, far * REGION + 4096), "on both legs at once");
        release.countDown();
        copy.get(60, TimeUnit.SECONDS);
        await("B's whole resync", () -> run(c::clusterRunOnce) && run(() -> b.resyncRunOnce(64))
                && "0".equals(b.status().get("resync_pending")));
        assertEquals(2, onLeg(fb, far * REGION), "A's last write copied to leg b with the far region");
        assertEquals(3, onLeg(fb, far * REGION + 4096), "C's write is still there after the copy");
        assertArrayEquals(Files.readAllBytes(fa), Files.readAllBytes(fb), "both legs are identical");
    }

    @Test
    void theRecoveringEntriesRoundTripAndAnOversizedOneBecomesOneCoveringRange() {
        java.util.Map<String, java.util.BitSet> e = new java.util.TreeMap<>();
        java.util.BitSet s = new java.util.BitSet();
        s.set(0, 4);
        s.set(9);
        s.set(100, 200);
        e.put("B", s);
        assertEquals("B=0-3,9,100-199\n", new String(ZnodeLayout.recoveringBytes(e), java.nio.charset.StandardCharsets.UTF_8));
        assertEquals(e, ZnodeLayout.parseRecovering(ZnodeLayout.recoveringBytes(e)));
        java.util.BitSet many = new java.util.BitSet();
        for (int r = 0; r < 400_000; r += 2) {
            many.set(r);
        }
        java.util.BitSet parsed = ZnodeLayout.parseRecovering(ZnodeLayout.recoveringBytes(java.util.Map.of("C", many))).get("C");
        java.util.BitSet all = new java.util.BitSet();
        all.set(0, 399_999);
        assertEquals(all, parsed, "a superset: more writes wait, none races a copy");
    }

    // ---- helpers

    ZooKeeperLog lastLog;

    @Override
    ZooKeeperLog log(String node) {
        lastLog = super.log(node);
        return lastLog;
    }

    /** Node {@code name} is dead for the others: its session ended, its member znode gone. */
    private void deadNode(ZooKeeperLog log, String name) throws Exception {
        expireSession(log);
        ZooKeeper zk = client();
        await("node " + name + "'s member znode to go", () -> {
            try {
                return zk.exists(path + "/members/" + name, false) == null;
            } catch (Exception e) {
                return false;
            }
        });
    }

    private FileLeg leg(Path f) throws IOException {
        FileLeg l = new FileLeg(f, SIZE);
        toClose.add(l);
        return l;
    }

    private static ByteBuffer block(long value) {
        return ByteBuffer.allocate(4096).putLong(0, value);
    }

    /** The value at {@code offset} in a leg file. */
    private static long onLeg(Path f, long offset) throws IOException {
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocate(8);
            ch.read(b, offset);
            return b.getLong(0);
        }
    }

    /** Writes {@code value} at {@code offset} of a leg file directly (a write that reached only that leg). */
    private static void onLeg(Path f, long offset, long value) throws IOException {
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.WRITE)) {
            ch.write(block(value), offset);
        }
    }

    private static void awaitQuietly(CountDownLatch l) throws IOException {
        try {
            if (!l.await(60, TimeUnit.SECONDS)) {
                throw new IOException("the test never released the held copy");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted");
        }
    }

    private interface Step {
        Object run() throws Exception;
    }

    private static boolean run(Step s) {
        try {
            s.run();
            return true;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
