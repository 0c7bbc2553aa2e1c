package dev.strata.mirror.internal.log.zk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.mirror.internal.io.MirrorTarget;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Reads of a region that is not in sync in the cluster go to the resync source only (leg a, the
 * lowest in-sync leg, the one every node's resync copies from), as dm-raid1 reads such a region:
 * node A dies with region 5 marked and its last write on leg a only (leg a holds 2, leg b 1);
 * node C, alive, reads region 5 many times before B's resync of it, during it and after it, and
 * always gets 2 — never the 1 of leg b, which the copy then overwrites (no flip-flop). A region
 * nobody marked is still read from both legs, and region 5 is again, once B has cleared it.
 */
class RemoteSourceReadTest extends ZkFixture {
    static final long SIZE = 80 * REGION;
    static final int R = 5;
    static final int FREE = 60;
    static final int READS = 200;
    Path fa;
    Path fb;

    @BeforeEach
    void files() throws IOException {
        Path dir = Files.createTempDirectory(Files.createDirectories(Path.of("target", "zk")), "source-read");
        fa = dir.resolve("leg-a.img");
        fb = dir.resolve("leg-b.img");
    }

    @Test
    void aDeadNodesMarksNotTakenOverYetAreReadFromTheSourceOnlyUntilCopiedAndCleared() throws Exception {
        run(false);
    }

    @Test
    void marksAlreadyTakenOverByAnotherNodeAreReadFromTheSourceOnlyUntilCopiedAndCleared() throws Exception {
        run(true);
    }

    private void run(boolean takenOverFirst) throws Exception {
        MirrorTarget a = mirror("A", log("A"), List.of(leg(fa), leg(fb)), true);
        ZooKeeperLog logA = lastLog;
        MirrorTarget b = mirror("B", log("B"), List.of(leg(fa), leg(fb)), true);
        MirrorTarget c = mirror("C", log("C"), List.of(leg(fa), leg(fb)), true);
        c.clusterRunOnce(); // C's first look at the members: A, B and C alive, nothing marked
        c.clusterRunOnce();
        assertEquals("0", c.status().get("zk_source_read_regions"));

        a.write(R * REGION, block(1), 0);
        onLeg(fa, R * REGION, 2); // A's last write reached leg a only when it died
        ZooKeeper zk = client();
        if (!takenOverFirst) {
            // another recoverer at work: nobody takes A over yet, C sees A dead with its marks
            zk.create(path + "/recoverer", "node=test\n".getBytes(), ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
        }
        deadNode(logA, "A");
        if (takenOverFirst) {
            assertTrue(b.clusterRunOnce(), "B took A over before C looked");
            assertEquals("1", b.status().get("resync_pending"));
        }
        await("C to learn that region 5 is not in sync", () -> {
            step(c::clusterRunOnce);
            return "1".equals(c.status().get("zk_source_read_regions"));
        });
        assertEquals("0", c.status().get("resync_pending"), "C does not copy region 5 itself");
        readsSeeOnlyTheSource(c);
        spreadOverBothLegs(c, FREE);

        if (!takenOverFirst) {
            zk.delete(path + "/recoverer", -1);
            assertTrue(b.clusterRunOnce(), "B takes A over");
        }
        await("B's resync of region 5 (C reading it all along)", () -> {
            step(c::clusterRunOnce); // acknowledges B's publication
            step(() -> b.resyncRunOnce(64));
            step(() -> readsSeeOnlyTheSource(c));
            return "0".equals(b.status().get("resync_pending"));
        });
        assertEquals(2, onLeg(fb, R * REGION), "the copy took leg a's data to leg b");
        readsSeeOnlyTheSource(c);

        b.flush();
        await("B to clear region 5 and C to read it from both legs again", () -> {
            step(b::clearerRunOnce);
            step(b::clusterRunOnce);
            step(c::clusterRunOnce); // its scan, every second, sees region 5 unmarked everywhere
            return "0".equals(c.status().get("zk_source_read_regions"));
        });
        spreadOverBothLegs(c, R);
    }

    /** {@code READS} reads of region 5 by C: every one has leg a's data and leg b serves none. */
    private Object readsSeeOnlyTheSource(MirrorTarget c) throws IOException {
        long before = legReads(c, "b");
        for (int i = 0; i < READS; i++) {
            ByteBuffer dst = ByteBuffer.allocate(4096);
            c.read(R * REGION, dst);
            assertEquals(2, dst.getLong(0), "read " + i + " of region 5 has the source's data");
        }
        assertEquals(before, legReads(c, "b"), "leg b served no read of region 5");
        return null;
    }

    private static void spreadOverBothLegs(MirrorTarget c, int region) throws IOException {
        long a0 = legReads(c, "a");
        long b0 = legReads(c, "b");
        for (int i = 0; i < READS; i++) {
            c.read(region * REGION, ByteBuffer.allocate(4096));
        }
        long a = legReads(c, "a") - a0;
        long b = legReads(c, "b") - b0;
        assertEquals(READS, a + b);
        assertTrue(a >= READS / 4 && b >= READS / 4, "region " + region + "'s reads spread over both legs: a=" + a + " b=" + b);
    }

    private static long legReads(MirrorTarget m, String leg) {
        return Long.parseLong(m.status().get("reads." + leg));
    }

    // ---- helpers

    ZooKeeperLog lastLog;

    @Override
    ZooKeeperLog log(String node) {
        lastLog = super.log(node);
        return lastLog;
    }

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

    private static long onLeg(Path f, long offset) throws IOException {
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocate(8);
            ch.read(b, offset);
            return b.getLong(0);
        }
    }

    private static void onLeg(Path f, long offset, long value) throws IOException {
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.WRITE)) {
            ch.write(block(value), offset);
        }
    }

    private interface Step {
        Object run() throws Exception;
    }

    private static void step(Step s) {
        try {
            s.run();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
