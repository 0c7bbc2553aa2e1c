package dev.strata.mirror.internal.log.zk;

import java.io.IOException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.ZooDefs;

/**
 * Takes dead nodes' marks over. A node is dead when {@code PATH/nodes/X} exists and
 * {@code PATH/members/X} does not (its session expired, or it stopped with marks left). One
 * recoverer at a time holds the ephemeral {@code PATH/recoverer}; for each dead node it creates
 * {@code PATH/members/X} itself (so X cannot rejoin meanwhile, and no other recoverer takes X),
 * makes X's marks its own node's marks (durably, behind its own fencing check), then deletes X's
 * chunks, {@code PATH/nodes/X} (which fences X: its token is gone) and the member znode. The
 * regions become this node's resync work; its own clears remove them after the resync, so a
 * region is clean only when no node has it marked.
 */
final class Recoverer {
    private final ZooKeeperLog log;
    private volatile int lastMembers;
    private volatile long recoveredNodes;
    private volatile long recoveredRegions;

    Recoverer(ZooKeeperLog log) {
        this.log = log;
    }

    int lastMembers() {
        return lastMembers;
    }

    long recoveredNodes() {
        return recoveredNodes;
    }

    long recoveredRegions() {
        return recoveredRegions;
    }

    /** One scan; returns the number of nodes taken over. */
    int runOnce(long deadline) throws IOException {
        ZnodeLayout z = log.z;
        List<String> nodes = log.call(h -> h.getChildren(z.nodes(), false), deadline);
        List<String> members = log.call(h -> h.getChildren(z.members(), log.session.watcher()), deadline);
        lastMembers = members.size();
        Set<String> dead = new HashSet<>(nodes);
        dead.removeAll(members);
        dead.remove(log.node);
        for (String e : log.recovering.entryNodes()) {
            if (!members.contains(e) && !nodes.contains(e) && !e.equals(log.node)) {
                // the resync entry of a node gone with no marks left (a stop that could not remove it): nobody copies there
                log.publisher.writeEntry(e, new java.util.BitSet(), deadline);
            }
        }
        if (dead.isEmpty()) {
            return 0;
        }
        try {
            log.call(h -> h.create(z.recoverer(), ZnodeLayout.text("node=" + log.node + "\n"), ZooDefs.Ids.OPEN_ACL_UNSAFE,
                    CreateMode.EPHEMERAL), deadline);
        } catch (ZkCall.Conflict e) {
            return 0; // another node is recovering
        }
        int n = 0;
        try {
            for (String x : dead) {
                if (takeOver(x, deadline)) {
                    n++;
                }
            }
        } finally {
            try {
                log.call(h -> {
                    h.delete(z.recoverer(), -1);
                    return null;
                }, deadline);
            } catch (IOException e) {
                // an expired session took it with it
            }
        }
        return n;
    }

    private boolean takeOver(String x, long deadline) throws IOException {
        ZnodeLayout z = log.z;
        try {
            log.call(h -> h.create(z.member(x), ZnodeLayout.text("recovering-by=" + log.node + "\n"), ZooDefs.Ids.OPEN_ACL_UNSAFE,
                    CreateMode.EPHEMERAL), deadline);
        } catch (ZkCall.Conflict e) {
            return false; // it came back, or someone else has it
        }
        boolean done = false;
        try {
            List<String> chunks;
            try {
                chunks = log.call(h -> h.getChildren(z.node(x), false), deadline);
            } catch (ZkCall.Fenced gone) {
                return false; // recovered by someone else since the scan
            }
            BitSet marks = new BitSet();
            for (String c : chunks) {
                if (c.startsWith("c-")) {
                    int idx = Integer.parseInt(c.substring(2));
                    byte[] data = log.call(h -> h.getData(z.node(x) + "/" + c, false, null), deadline);
                    ZnodeLayout.readChunk(data, idx, log.regions, marks);
                }
            }
            log.adopt(marks);
            List<MultiSplitter.Sized> ops = new ArrayList<>();
            // a recovery of a leg waits until these regions are copied too (SharedLegState)
            ops.add(MultiSplitter.Sized.of(log.legState.withdrawCopied(), 64));
            for (String c : chunks) {
                ops.add(MultiSplitter.Sized.of(Op.delete(z.node(x) + "/" + c, -1), 0));
            }
            ops.add(MultiSplitter.Sized.of(Op.delete(z.node(x), -1), 0));
            ops.add(MultiSplitter.Sized.of(Op.delete(z.member(x), -1), 0));
            log.runBatches(ops, log.fenceCheck(), deadline, false);
            log.legState.withdrawn();
            // x copies nothing any more: its resync entry goes; its regions are this node's resync work now,
            // published again (and acknowledged) before this node copies them
            log.publisher.writeEntry(x, new BitSet(), deadline);
            recoveredNodes++;
            recoveredRegions += marks.cardinality();
            done = true;
            return true;
        } finally {
            if (!done) {
                try {
                    log.call(h -> {
                        h.delete(z.member(x), -1);
                        return null;
                    }, deadline);
                } catch (IOException e) {
                    // gone with the session
                }
            }
        }
    }
}
