package dev.strata.mirror.internal.log.zk;

import dev.strata.api.InvalidArgumentException;
import dev.strata.mirror.internal.log.RegionLog.LegShare;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;

/**
 * The leg state every node of a cluster shares, {@code PATH/legs}: read at open and again
 * whenever its watch fires (and at every scan, as a watch of a lost session is gone), so a leg
 * one node took out is out on every node. A recovery is two-phase, as every node holds marks of
 * its own: the node recovering a leg adds it to {@code recovering_mask} under a new
 * {@code epoch}; every node then writes to the leg, copies its own marks to it and says so in its
 * member znode ({@code recovered_epoch=E}); once every live member has (and no dead node's marks
 * wait to be taken over), one {@code multi()} checks those member znodes' versions and puts the
 * legs back in {@code in_sync_mask}. A recoverer that takes a dead node's marks over withdraws its
 * own {@code recovered_epoch} in the same request, so the dead node's regions are copied too
 * before the leg counts as in sync.
 *
 * <p>Calls run under the log's lock (the daemon's round, or a commit's leg-state write).
 */
final class SharedLegState {
    private final ZooKeeperLog log;
    private volatile LegShare current;
    private volatile int version = -1;
    private volatile long copiedEpoch = -1;
    private volatile boolean fired;
    private final Watcher watcher = e -> fired = true;

    SharedLegState(ZooKeeperLog log) {
        this.log = log;
    }

    LegShare current() {
        return current;
    }

    long copiedEpoch() {
        return copiedEpoch;
    }

    /** A new member znode (a join) holds no {@code recovered_epoch}. */
    void joined() {
        copiedEpoch = -1;
        fired = true; // a new session lost the watch
    }

    /** Whether the watch fired since the last call. */
    boolean takeFired() {
        boolean f = fired;
        fired = false;
        return f;
    }

    /** Reads {@code PATH/legs} and sets the watch again. */
    LegShare read(long deadline) throws IOException {
        Stat st = new Stat();
        byte[] d = log.call(h -> h.getData(log.z.legs(), watcher, st), deadline);
        LegShare s = ZnodeLayout.parseLegShare(d);
        if (s == null) {
            throw new InvalidArgumentException("mirror: " + log.z.legs() + " is not a mirror log's leg state; give another path");
        }
        current = s;
        version = st.getVersion();
        return s;
    }

    /** The daemon's round: the state again, and a recovery finished if every live node has copied its marks. */
    void runOnce(long deadline) throws IOException {
        LegShare s = read(deadline);
        if (s.recovering() != 0) {
            tryComplete(s, deadline);
        }
    }

    /**
     * This node's legs that did not fail ({@code working}: in sync or recovering here) are all it
     * knows; the others leave the shared in-sync and recovering masks (fenced like a commit).
     * Returns whether it wrote.
     */
    boolean legsFailed(int working, long deadline) throws IOException {
        while (true) {
            LegShare s = current;
            LegShare n = new LegShare(s.inSync() & working, s.recovering() & working, s.epoch());
            if (n.equals(s)) {
                return false;
            }
            if (update(s, n, deadline)) {
                return true;
            }
        }
    }

    /** Starts a recovery of {@code leg} for every node: recovering under a new epoch. */
    void startRecovery(int leg, long deadline) throws IOException {
        while (true) {
            LegShare s = current;
            if (!update(s, new LegShare(s.inSync() & ~(1 << leg), s.recovering() | (1 << leg), s.epoch() + 1), deadline)) {
                continue;
            }
            return;
        }
    }

    /** This node copied its marks for {@code epoch}: says so in its member znode, then tries to finish. */
    void copied(long epoch, long deadline) throws IOException {
        log.call(h -> h.setData(log.z.member(log.node), ZnodeLayout.memberBytes(log.node, epoch), -1), deadline);
        copiedEpoch = epoch;
        LegShare s = read(deadline);
        if (s.recovering() != 0) {
            tryComplete(s, deadline);
        }
    }

    /** The op a takeover adds to its request: this node's {@code recovered_epoch} withdrawn. */
    Op withdrawCopied() {
        return Op.setData(log.z.member(log.node), ZnodeLayout.memberBytes(log.node, -1), -1);
    }

    void withdrawn() {
        copiedEpoch = -1;
    }

    private void tryComplete(LegShare s, long deadline) throws IOException {
        List<String> members = log.call(h -> h.getChildren(log.z.members(), false), deadline);
        List<String> nodes = log.call(h -> h.getChildren(log.z.nodes(), false), deadline);
        if (!members.containsAll(nodes)) {
            return; // a dead node's marks wait to be taken over (and copied)
        }
        List<Op> ops = new ArrayList<>();
        for (String m : members) {
            Stat st = new Stat();
            byte[] d;
            try {
                d = log.call(h -> h.getData(log.z.member(m), false, st), deadline);
            } catch (ZkCall.Fenced gone) {
                return; // it left meanwhile: the next round sees
            }
            if (ZnodeLayout.memberEpoch(d) < s.epoch()) {
                return; // not every node has copied its marks yet
            }
            ops.add(Op.check(log.z.member(m), st.getVersion()));
        }
        ops.add(Op.setData(log.z.legs(), ZnodeLayout.legsBytes(new LegShare(s.inSync() | s.recovering(), 0, s.epoch())), version));
        try {
            log.call(h -> h.multi(ops), deadline);
        } catch (ZkCall.Fenced | ZkCall.Conflict changed) {
            // a member or the state changed since it was read: the next round
        }
        read(deadline);
    }

    /** Writes {@code n} over {@code s} if the znode is still at the version read; false (and read again) if not. */
    private boolean update(LegShare s, LegShare n, long deadline) throws IOException {
        int v = version;
        try {
            log.call(h -> h.multi(List.of(log.fenceCheck().op(), Op.setData(log.z.legs(), ZnodeLayout.legsBytes(n), v))), deadline);
            current = n;
            version = v + 1;
            return true;
        } catch (ZkCall.Fenced changed) {
            read(deadline);
            if (version == v) {
                throw changed; // the state did not change: the node's own token did, the caller rejoins
            }
            return false; // another node changed the state first: again over the new one
        }
    }
}
