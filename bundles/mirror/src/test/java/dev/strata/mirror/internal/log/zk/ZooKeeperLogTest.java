package dev.strata.mirror.internal.log.zk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.InvalidArgumentException;
import dev.strata.mirror.internal.Devices;
import dev.strata.mirror.internal.io.MirrorTarget;
import dev.strata.mirror.internal.log.RegionLog;
import dev.strata.testsupport.crash.CrashableDevice;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Test;

/** The {@code zookeeper:} log against a real server: round trips, the marks' znodes, the multi split, reopening. */
class ZooKeeperLogTest extends ZkFixture {
    final Devices.Counting a = new Devices.Counting(new CrashableDevice("a", 4 << 20, 4096));
    final Devices.Counting b = new Devices.Counting(new CrashableDevice("b", 4 << 20, 4096));

    long stat(MirrorTarget m, String k) {
        return Long.parseLong(m.status().get(k));
    }

    static void write(MirrorTarget m, long offset) throws Exception {
        m.write(offset, ByteBuffer.wrap(new byte[4096]).put(0, (byte) (offset / 4096 + 1)), 0);
    }

    /** Region {@code r}'s bit in the chunk znode of {@code node}, read by another client. */
    boolean markedInZooKeeper(ZooKeeper zk, String node, int r) throws Exception {
        byte[] d = zk.getData(new ZnodeLayout(path).chunk(node, ZnodeLayout.chunkOf(r)), false, null);
        int i = r % ZnodeLayout.CHUNK_REGIONS;
        return (d[i >>> 3] & (1 << (i & 7))) != 0;
    }

    @Test
    void oneRoundTripForAFlushWithNewMarksNoneForHotWritesAndTheMarkIsInZooKeeperFirst() throws Exception {
        ZooKeeper zk = client();
        MirrorTarget m = mirror("n1", log("n1"), List.of(a, b), true);
        List<String> violations = new ArrayList<>();
        Devices.IoHook check = offset -> {
            try {
                if (!markedInZooKeeper(zk, "n1", (int) (offset / REGION))) {
                    violations.add("leg written at " + offset + " before its region's mark was in ZooKeeper");
                }
            } catch (Exception e) {
                violations.add(e.toString());
            }
        };
        a.beforeWrite = check;
        b.beforeWrite = check;
        long base = stat(m, "log_round_trips");
        write(m, 0);
        assertEquals(base + 1, stat(m, "log_round_trips"), "a write into a new region: one multi");
        for (int i = 1; i < 16; i++) {
            write(m, i * 4096);
        }
        assertEquals(base + 1, stat(m, "log_round_trips"), "writes into a hot region: no ZooKeeper request");
        assertEquals(15, stat(m, "writes_hot"));
        assertEquals(List.of(), violations);
        assertTrue(zk.exists(path + "/members/n1", false).getEphemeralOwner() != 0, "the member znode is ephemeral");
        assertEquals(0, zk.exists(path + "/nodes/n1/c-000000", false).getEphemeralOwner(), "the marks are persistent");
    }

    @Test
    void aServerThatCannotBeReachedIsOneLineAfterTheConnectTimeout() throws Exception {
        int port;
        try (java.net.ServerSocket free = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort(); // nothing listens there once it is closed
        }
        ZooKeeperLog log = new ZooKeeperLog(new ZkLogConfig("127.0.0.1:" + port, path + "-none", "n1", 2000, 1000), 0);
        java.io.IOException e = assertThrows(java.io.IOException.class, () -> log.open(2, REGION, 16, true));
        assertEquals("mirror: cannot reach ZooKeeper at 127.0.0.1:" + port + " for the log at zookeeper:127.0.0.1:" + port
                + path + "-none within 1.0 s (zk_connect_timeout=1000); is ZooKeeper running and reachable from here?",
                e.getMessage());
    }

    @Test
    void twentyFlushIntervalsCostTwentyMultisIntegratedAndSixtyNaive() throws Exception {
        long[] trips = new long[2];
        for (int mode = 0; mode < 2; mode++) {
            ZooKeeperLog log = new ZooKeeperLog(new ZkLogConfig(server.connect(), path + "-" + mode, "n1", 2000), 0);
            MirrorTarget m = mirror("n1", log, List.of(a, b), true);
            m.message("integrated_flush", mode == 0 ? "true" : "false");
            long base = stat(m, "log_round_trips");
            for (int cycle = 0; cycle < 20; cycle++) {
                write(m, cycle * REGION);
                for (int i = 1; i < 4; i++) {
                    write(m, cycle * REGION + i * 4096);
                }
                m.flush();
            }
            trips[mode] = stat(m, "log_round_trips") - base;
            m.close();
        }
        assertEquals(20, trips[0], "integrated: one multi per flush interval (the marks, carrying the last clears)");
        assertEquals(60, trips[1], "naive: a mark multi, a flush (check-only) multi and a clear multi per flush interval");
    }

    @Test
    void aCommitOverOneMebibyteIsSplitBelowTheServersLimitAndEveryMarkArrives() throws Exception {
        int chunks = 300; // 300 chunks of 4 KiB: 1.2 MiB in one commit, over jute.maxbuffer
        long regions = (long) chunks * ZnodeLayout.CHUNK_REGIONS;
        ZooKeeperLog log = log("big");
        toClose.add(log::close);
        log.open(2, 4096, regions, false);
        BitSet marks = new BitSet();
        for (int c = 0; c < chunks; c++) {
            marks.set(c * ZnodeLayout.CHUNK_REGIONS + c);
        }
        long before = log.roundTrips();
        long splits = Long.parseLong(log.status().get("zk_multi_splits"));
        log.commit(marks, new BitSet());
        long trips = log.roundTrips() - before;
        assertEquals(3, trips, "about 125 chunks of 4 KiB per 512 KiB request: three requests");
        assertEquals(splits + 2, Long.parseLong(log.status().get("zk_multi_splits")));
        ZooKeeper zk = client();
        for (int c = 0; c < chunks; c++) {
            assertTrue(markedInZooKeeper(zk, "big", c * ZnodeLayout.CHUNK_REGIONS + c), "chunk " + c);
        }
        // the limit is real: the same chunks in one request are refused by the server
        ZnodeLayout z = new ZnodeLayout(path);
        List<Op> one = new ArrayList<>();
        for (int c = 0; c < chunks; c++) {
            one.add(Op.setData(z.chunk("big", c), new byte[4096], -1));
        }
        assertThrows(KeeperException.class, () -> zk.multi(one));
        assertTrue(markedInZooKeeper(client(), "big", 5 * ZnodeLayout.CHUNK_REGIONS + 5), "the refused request changed nothing");
    }

    @Test
    void aSmallBudgetSplitsEveryCommitAndEachPartCarriesTheFence() throws Exception {
        ZooKeeperLog log = new ZooKeeperLog(config("small"), 0, 10_000, ZooKeeperLog.DEFAULT_PAUSE_NANOS);
        toClose.add(log::close);
        long regions = 10L * ZnodeLayout.CHUNK_REGIONS;
        log.open(2, 4096, regions, false);
        BitSet marks = new BitSet();
        for (int c = 0; c < 10; c++) {
            marks.set(c * ZnodeLayout.CHUNK_REGIONS);
        }
        long before = log.roundTrips();
        log.commit(marks, new BitSet());
        assertEquals(5, log.roundTrips() - before, "two 4 KiB chunks per 10 kB request");
        // every part checks the token: a part behind a changed token is never applied
        List<List<Op>> parts = MultiSplitter.split(log.fenceCheck(), List.of(
                MultiSplitter.Sized.of(Op.delete("/x/a", -1), 6000), MultiSplitter.Sized.of(Op.delete("/x/b", -1), 6000)), 10_000);
        assertEquals(2, parts.size());
        for (List<Op> p : parts) {
            assertEquals(org.apache.zookeeper.ZooDefs.OpCode.check, p.get(0).getType());
        }
    }

    @Test
    void aReopenedNodeFindsItsMarksAndAClearedRegionIsGone() throws Exception {
        ZooKeeperLog log = log("n1");
        log.open(2, REGION, 64, false);
        BitSet marks = new BitSet();
        marks.set(3);
        marks.set(40);
        log.commit(marks, new BitSet());
        BitSet clear = new BitSet();
        clear.set(3);
        log.commit(new BitSet(), clear);
        log.session.close(); // a crash: no clean close, the session simply ends
        ZooKeeperLog again = log("n1");
        toClose.add(again::close);
        RegionLog.Opened o = again.open(2, REGION, 64, false);
        BitSet want = new BitSet();
        want.set(40);
        assertEquals(want, o.dirty());
        assertFalse(o.fresh());
        assertEquals(3, o.inSyncMask());
    }

    @Test
    void aNewLogStartsAllDirtyAndRecordsTheLegState() throws Exception {
        ZooKeeperLog log = log("n1");
        toClose.add(log::close);
        RegionLog.Opened o = log.open(2, REGION, 64, true);
        assertTrue(o.fresh());
        assertEquals(64, o.dirty().cardinality());
        log.writeLegState(1);
        assertEquals("in_sync_mask=1\nrecovering_mask=0\nepoch=0\n", new String(client().getData(path + "/legs", false, null)));
        // an older log's one-line leg state reads as nothing recovering
        assertEquals(new RegionLog.LegShare(3, 0, 0), ZnodeLayout.parseLegShare("in_sync_mask=3\n".getBytes()));
        assertEquals(null, ZnodeLayout.parseLegShare("in_sync=3\n".getBytes()));
    }

    @Test
    void anotherGeometryOrALiveNodeOfTheSameNameIsRefusedInOneLine() throws Exception {
        ZooKeeperLog log = log("n1");
        toClose.add(log::close);
        log.open(2, REGION, 64, false);
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> log("n2").open(2, 2 * REGION, 32, false));
        assertEquals("mirror: the log at zookeeper:" + server.connect() + path + " belongs to a mirror of 2 legs, region_size=65536,"
                + " 64 regions; give the same legs and region_size, or another path", e.getMessage());
        e = assertThrows(InvalidArgumentException.class, () -> log("n1").open(2, REGION, 64, false));
        assertEquals("mirror: node 'n1' is already a live member of zookeeper:" + server.connect() + path
                + " (another process with node=n1?); give each node its own node=NAME", e.getMessage());
        assertTrue(log.joined(), "the live node is not disturbed");
    }

    @Test
    void aCleanCloseWithNothingMarkedLeavesNothingToTakeOver() throws Exception {
        MirrorTarget m = mirror("n1", log("n1"), List.of(a, b), true);
        write(m, 0);
        m.flush();
        m.close();
        ZooKeeper zk = client();
        assertEquals(null, zk.exists(path + "/nodes/n1", false));
        assertEquals(null, zk.exists(path + "/members/n1", false));
    }
}
