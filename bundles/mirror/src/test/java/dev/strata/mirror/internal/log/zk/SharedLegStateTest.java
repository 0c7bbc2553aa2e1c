package dev.strata.mirror.internal.log.zk;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.mirror.internal.io.MirrorTarget;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Two nodes over the same two leg files and one log: a leg that failed on one node is taken out
 * on the other as soon as the shared leg state says so (it stops reading and writing it), and a
 * recovery started on one node brings the leg back for both, each node copying the regions it
 * wrote while the leg was out.
 */
class SharedLegStateTest extends ZkFixture {
    static final long SIZE = 32 * REGION;
    static final int BLOCK = 4096;
    final Map<Long, Long> acked = new HashMap<>();
    long seq;

    @Test
    void aLegFailedOnOneNodeIsOutOnEveryNodeAndOneRecoveryBringsItBackForAll() throws Exception {
        Path dir = Files.createTempDirectory(Files.createDirectories(Path.of("target", "zk")), "shared-legs");
        Path fa = dir.resolve("leg-a.img");
        Path fb = dir.resolve("leg-b.img");
        MirrorTarget a = mirror("A", log("A"), List.of(leg(fa), leg(fb)), true);
        MirrorTarget b = mirror("B", log("B"), List.of(leg(fa), leg(fb)), true);
        Random rnd = new Random(5);
        writeSome(a, rnd, 0, 40);
        writeSome(b, rnd, 16, 40);
        a.flush();
        b.flush();

        a.message("fail", "b"); // leg b failed on node A
        assertEquals("out_of_sync", a.status().get("leg.b"));
        await("node B to learn that leg b is out", () -> run(b::clusterRunOnce) && "out_of_sync".equals(b.status().get("leg.b")));
        assertEquals("1", b.status().get("zk_legs_in_sync_mask"));

        // B neither writes nor reads leg b any more
        long readsB = Long.parseLong(b.status().get("reads.b"));
        byte[] before = Files.readAllBytes(fb);
        Map<Long, Long> fresh = writeSome(b, rnd, 16, 40);
        writeSome(a, rnd, 0, 40);
        b.flush();
        verify(b, fresh);
        assertEquals(readsB, Long.parseLong(b.status().get("reads.b")), "no read of B went to leg b");
        assertArrayEquals(before, Files.readAllBytes(fb), "no write of either node went to leg b");

        // one recovery, on A: both nodes copy what they wrote while b was out, then b is in sync for both
        long copiedB = Long.parseLong(b.status().get("resync_bytes"));
        a.message("recover", "b");
        await("leg b in sync on both nodes", () -> run(a::clusterRunOnce) && run(() -> a.resyncRunOnce(64) >= 0)
                && run(b::clusterRunOnce) && run(() -> b.resyncRunOnce(64) >= 0)
                && "in_sync".equals(a.status().get("leg.b")) && "in_sync".equals(b.status().get("leg.b")));
        assertEquals("3", b.status().get("zk_legs_in_sync_mask"));
        assertEquals("0", b.status().get("zk_legs_recovering_mask"));
        assertTrue(Long.parseLong(b.status().get("resync_bytes")) > copiedB, "B copied its own regions to leg b");
        assertArrayEquals(Files.readAllBytes(fa), Files.readAllBytes(fb), "both legs are identical");
        ByteBuffer onB = ByteBuffer.wrap(Files.readAllBytes(fb));
        for (Map.Entry<Long, Long> e : acked.entrySet()) {
            assertEquals(e.getValue(), onB.getLong((int) (e.getKey() + 8)), "leg b holds the write at " + e.getKey());
        }
        verify(a, acked);
        verify(b, acked);
        assertTrue(Long.parseLong(b.status().get("reads.b")) > readsB, "B reads leg b again");
    }

    @Test
    void aLegThatFailsOnAnotherNodeDuringItsRecoveryCallsTheRecoveryOffForAll() throws Exception {
        Path dir = Files.createTempDirectory(Files.createDirectories(Path.of("target", "zk")), "shared-legs");
        Path fa = dir.resolve("leg-a.img");
        Path fb = dir.resolve("leg-b.img");
        MirrorTarget a = mirror("A", log("A"), List.of(leg(fa), leg(fb)), true);
        MirrorTarget b = mirror("B", log("B"), List.of(leg(fa), leg(fb)), true);
        Random rnd = new Random(6);
        writeSome(a, rnd, 0, 20);
        writeSome(b, rnd, 16, 20);
        a.message("fail", "b");
        await("node B to learn that leg b is out", () -> run(b::clusterRunOnce) && "out_of_sync".equals(b.status().get("leg.b")));
        a.message("recover", "b");
        await("node B to join the recovery", () -> run(b::clusterRunOnce) && "recovering".equals(b.status().get("leg.b")));

        b.message("fail", "b"); // it fails again, on B, before B copied its regions
        assertEquals("0", b.status().get("zk_legs_recovering_mask"), "B called the recovery off");
        await("node A to give the recovery up", () -> run(a::clusterRunOnce) && "out_of_sync".equals(a.status().get("leg.b")));
        assertEquals("1", a.status().get("zk_legs_in_sync_mask"));
        writeSome(a, rnd, 0, 20);
        writeSome(b, rnd, 16, 20);

        // a new recovery takes it back on both
        a.message("recover", "b");
        await("leg b in sync on both nodes", () -> run(a::clusterRunOnce) && run(() -> a.resyncRunOnce(64) >= 0)
                && run(b::clusterRunOnce) && run(() -> b.resyncRunOnce(64) >= 0)
                && "in_sync".equals(a.status().get("leg.b")) && "in_sync".equals(b.status().get("leg.b")));
        assertArrayEquals(Files.readAllBytes(fa), Files.readAllBytes(fb), "both legs are identical");
        verify(a, acked);
        verify(b, acked);
    }

    private FileLeg leg(Path f) throws IOException {
        FileLeg l = new FileLeg(f, SIZE);
        toClose.add(l);
        return l;
    }

    /** {@code n} 4 KiB writes into regions {@code [first, first + 16)}; returns offset → sequence of these. */
    private Map<Long, Long> writeSome(MirrorTarget m, Random rnd, int first, int n) throws IOException {
        Map<Long, Long> these = new HashMap<>();
        for (int i = 0; i < n; i++) {
            long off = (first + rnd.nextInt(16)) * REGION + rnd.nextInt((int) (REGION / BLOCK)) * (long) BLOCK;
            long s = ++seq;
            m.write(off, ByteBuffer.allocate(BLOCK).putLong(0, off).putLong(8, s), 0);
            acked.put(off, s);
            these.put(off, s);
        }
        return these;
    }

    private static void verify(MirrorTarget m, Map<Long, Long> expected) throws IOException {
        for (Map.Entry<Long, Long> e : expected.entrySet()) {
            ByteBuffer got = ByteBuffer.allocate(BLOCK);
            m.read(e.getKey(), got);
            assertEquals(e.getValue(), got.getLong(8), "read at " + e.getKey());
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
