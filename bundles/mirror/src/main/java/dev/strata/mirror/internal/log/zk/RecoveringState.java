package dev.strata.mirror.internal.log.zk;

import dev.strata.mirror.internal.log.RegionLog.RemoteGate;
import java.io.IOException;
import java.util.BitSet;
import java.util.Map;
import java.util.Set;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.Stat;

/**
 * This node's side of the other nodes' resyncs (dm-raid1's {@code is_remote_recovering}): the
 * regions {@code PATH/recovering} lists for other nodes are held back here (writes to them wait,
 * {@link RemoteGate#holdBack}); once no write of this node to them is in flight any more, this
 * node acknowledges the version it applied in {@code PATH/acks/NODE}, and a resyncing node copies
 * only after every live member has. The znode is watched and read again at every scan; a commit
 * of marks carries a {@code check} of the version this node applied, so a node
 * that missed a change cannot mark (and then write) a region without seeing it first (the
 * version is checked in {@code ZooKeeperLog}'s commits).
 *
 * <p>Reads run on the daemon's round and on a commit whose check failed; the monitor orders them,
 * and a version older than the one applied is never applied.
 */
final class RecoveringState {
    private final ZooKeeperLog log;
    private volatile boolean fired = true;
    private final Watcher watcher = e -> fired = true;
    private volatile RemoteGate gate;
    /** The regions read from the resync source only: these entries and dead nodes' marks. */
    final UnsyncedMarks unsynced;
    // guarded by this
    private int version = -1;
    private Map<String, BitSet> entries = Map.of();
    private BitSet others = new BitSet();
    private int acked = -1;
    private volatile long acks;

    RecoveringState(ZooKeeperLog log) {
        this.log = log;
        this.unsynced = new UnsyncedMarks(log);
    }

    void gate(RemoteGate g) {
        gate = g;
        unsynced.gate(g);
    }

    synchronized int version() {
        return version;
    }

    /** The nodes with an entry (the recoverer removes those of nodes gone for good). */
    synchronized Set<String> entryNodes() {
        return Set.copyOf(entries.keySet());
    }

    synchronized Map<String, BitSet> entries() {
        return entries;
    }

    /** The regions other nodes are resyncing, as last applied (status, tests). */
    synchronized BitSet heldBack() {
        return (BitSet) others.clone();
    }

    long acks() {
        return acks;
    }

    /** A new session: its ack znode is gone, and the watch with it. */
    synchronized void joined() {
        acked = -1;
        fired = true;
    }

    /**
     * Reads {@code PATH/recovering} (creating it for a log made before it existed) with its watch
     * set, and holds back the regions other nodes list. Returns whether the version changed.
     */
    boolean read(long deadline) throws IOException {
        fired = false;
        Stat st = new Stat();
        byte[] d;
        while (true) {
            try {
                d = log.call(h -> h.getData(log.z.recovering(), watcher, st), deadline);
                break;
            } catch (ZkCall.Fenced missing) {
                try {
                    log.call(h -> h.create(log.z.recovering(), new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT), deadline);
                } catch (ZkCall.Conflict raced) {
                    // made by another node meanwhile
                }
            }
        }
        Map<String, BitSet> e = ZnodeLayout.parseRecovering(d);
        BitSet o = new BitSet();
        for (Map.Entry<String, BitSet> x : e.entrySet()) {
            if (!x.getKey().equals(log.node)) {
                o.or(x.getValue());
            }
        }
        synchronized (this) {
            if (st.getVersion() < version) {
                return false; // an older read than one applied already
            }
            boolean changed = st.getVersion() != version;
            RemoteGate g = gate;
            if (g != null) {
                g.holdBack(o); // before the version counts as applied: a commit checks it, then writes
            }
            unsynced.listed(o); // before it is acknowledged: the copy waits for that, so no read sees a leg flip

            version = st.getVersion();
            entries = e;
            others = o;
            return changed;
        }
    }

    /**
     * The daemon's round: reads again if the watch fired (or {@code scan}), and acknowledges the
     * version applied once this node's writes to the held-back regions have drained.
     */
    void runOnce(boolean scan, long deadline) throws IOException {
        if (fired || scan) {
            read(deadline);
        }
        int v;
        BitSet o;
        synchronized (this) {
            if (acked >= version) {
                return;
            }
            v = version;
            o = others;
        }
        RemoteGate g = gate;
        if (g != null && !g.drained(o)) {
            return; // the next round: a write to one of them is still in flight here
        }
        writeAck(v, deadline);
        synchronized (this) {
            acked = Math.max(acked, v);
        }
        acks++;
    }

    private void writeAck(int v, long deadline) throws IOException {
        byte[] data = ZnodeLayout.ackBytes(v);
        while (true) {
            try {
                log.call(h -> h.setData(log.z.ack(log.node), data, -1), deadline);
                return;
            } catch (ZkCall.Fenced missing) {
                // first ack of this session (or of a log made before acks existed)
            }
            try {
                log.call(h -> h.create(log.z.ack(log.node), data, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL), deadline);
                return;
            } catch (ZkCall.Conflict raced) {
                continue; // ours after all: set it
            } catch (ZkCall.Fenced noParent) {
                try {
                    log.call(h -> h.create(log.z.acks(), new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT), deadline);
                } catch (ZkCall.Conflict there) {
                    // made by another node
                }
            }
        }
    }
}
