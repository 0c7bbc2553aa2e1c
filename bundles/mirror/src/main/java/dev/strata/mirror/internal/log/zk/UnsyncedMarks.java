package dev.strata.mirror.internal.log.zk;

import dev.strata.mirror.internal.log.RegionLog.RemoteGate;
import java.io.IOException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;

/**
 * The regions this node reads from the resync source only, as dm-raid1 reads a region that is
 * not in sync (docs/mirror.md, "Reads in a cluster"): the regions other nodes list in
 * {@code PATH/recovering}, and the marks of every node whose membership went (its last writes
 * may have reached one leg only) until no node has them marked any more — the node that took
 * them over holds them until copied, so a region unmarked everywhere has been copied (or was
 * never written unevenly). The I/O path only reads the published set ({@link RemoteGate#readFromSource}).
 *
 * <p>A dead node's marks are read when its member znode is seen gone (the membership watch, or
 * the scan every second), before this node acknowledges anything in the same round. If they are
 * gone already (taken over), the marks of every node are read: the takeover sets them in the
 * recoverer's chunks before it deletes the dead node's. Regions leave the set after a read of all
 * nodes' chunks for them in one request ({@code multi} of reads, one snapshot), at the scan.
 */
final class UnsyncedMarks {
    private final ZooKeeperLog log;
    private volatile RemoteGate gate;
    // guarded by this
    private Set<String> lastMembers;
    private final Set<String> learned = new HashSet<>();
    private final BitSet marks = new BitSet();
    private BitSet listed = new BitSet();
    private int published = 0;

    UnsyncedMarks(ZooKeeperLog log) {
        this.log = log;
    }

    void gate(RemoteGate g) {
        gate = g;
        publish();
    }

    /** The regions other nodes list in {@code PATH/recovering}, as just applied. */
    void listed(BitSet others) {
        synchronized (this) {
            listed = others;
        }
        publish();
    }

    /** The regions reads go to the resync source for (status, tests). */
    synchronized int regions() {
        return published;
    }

    /** Learns the marks of nodes whose membership went; at a scan, lets go of regions no node has marked. */
    void runOnce(boolean scan, long deadline) throws IOException {
        ZnodeLayout z = log.z;
        List<String> nodes = log.call(h -> h.getChildren(z.nodes(), false), deadline);
        List<String> members = log.call(h -> h.getChildren(z.members(), log.session.watcher()), deadline);
        Set<String> gone = new HashSet<>();
        boolean takenOver;
        synchronized (this) {
            // the first look (this node just started): which of the others' marks are in sync is not
            // known (one may have taken a dead node over before), so all of them are read
            takenOver = lastMembers == null;
            if (lastMembers != null) {
                gone.addAll(lastMembers); // went since the last look: learnt again, even if seen dead before
                gone.removeAll(members);
            }
            for (String n : nodes) {
                if (!members.contains(n) && !learned.contains(n)) {
                    gone.add(n); // dead and not taken over yet (e.g. already when this node joined)
                }
            }
            gone.remove(log.node);
            lastMembers = new HashSet<>(members);
            learned.retainAll(nodes);
            learned.removeAll(members);
        }
        boolean changed = false;
        for (String x : gone) {
            BitSet m = readMarks(x, deadline);
            if (m == null) {
                takenOver = true;
                continue;
            }
            changed |= add(m);
            synchronized (this) {
                learned.add(x);
            }
        }
        if (takenOver) {
            // taken over: its marks are in the recoverer's chunks by now (set there before its own were deleted)
            List<String> all = log.call(h -> h.getChildren(z.nodes(), false), deadline);
            for (String n : all) {
                BitSet m = n.equals(log.node) ? null : readMarks(n, deadline);
                if (m != null) {
                    changed |= add(m);
                }
            }
        }
        if (scan) {
            changed |= retire(nodes, deadline);
        }
        if (changed) {
            publish();
        }
    }

    private synchronized boolean add(BitSet m) {
        int before = marks.cardinality();
        marks.or(m);
        return marks.cardinality() != before;
    }

    /** Node {@code x}'s marks, or null when its znode is gone. */
    private BitSet readMarks(String x, long deadline) throws IOException {
        ZnodeLayout z = log.z;
        BitSet m = new BitSet();
        try {
            for (String c : log.call(h -> h.getChildren(z.node(x), false), deadline)) {
                if (c.startsWith("c-")) {
                    int idx = Integer.parseInt(c.substring(2));
                    ZnodeLayout.readChunk(log.call(h -> h.getData(z.node(x) + "/" + c, false, null), deadline), idx, log.regions, m);
                }
            }
        } catch (ZkCall.Fenced gone) {
            return null;
        }
        return m;
    }

    /** Removes the regions no node of {@code nodes} has marked; one request per chunk, so marks moving between nodes are seen. */
    private boolean retire(List<String> nodes, long deadline) throws IOException {
        BitSet m;
        synchronized (this) {
            if (marks.isEmpty()) {
                return false;
            }
            m = (BitSet) marks.clone();
        }
        BitSet keep = new BitSet();
        for (int c = ZnodeLayout.chunkOf(m.nextSetBit(0)); c >= 0; c = next(m, c)) {
            int chunk = c;
            List<Op> ops = new ArrayList<>();
            for (String n : nodes) {
                ops.add(Op.getData(log.z.chunk(n, chunk)));
            }
            List<OpResult> results;
            try {
                results = log.call(h -> h.multi(ops), deadline);
            } catch (ZkCall.Fenced changedMeanwhile) {
                return false; // a node went or came meanwhile: the next scan
            }
            for (OpResult r : results) {
                if (!(r instanceof OpResult.GetDataResult d)) {
                    return false;
                }
                ZnodeLayout.readChunk(d.getData(), chunk, log.regions, keep);
            }
        }
        synchronized (this) {
            // marks learnt meanwhile stay: only what the snapshot saw unmarked goes
            m.andNot(keep);
            int before = marks.cardinality();
            marks.andNot(m);
            return marks.cardinality() != before;
        }
    }

    private static int next(BitSet m, int chunk) {
        int r = m.nextSetBit((chunk + 1) * ZnodeLayout.CHUNK_REGIONS);
        return r < 0 ? -1 : ZnodeLayout.chunkOf(r);
    }

    /** Under the monitor, so two publications never reach the gate out of order (the gate takes no lock). */
    private synchronized void publish() {
        BitSet s = (BitSet) marks.clone();
        s.or(listed);
        published = s.cardinality();
        RemoteGate g = gate;
        if (g != null) {
            g.readFromSource(s);
        }
    }
}
