package dev.strata.mirror.internal.log.zk;

import dev.strata.api.InvalidArgumentException;
import dev.strata.mirror.internal.log.zk.ZkCall.Conflict;
import dev.strata.mirror.internal.log.zk.ZkCall.Fenced;
import dev.strata.mirror.internal.log.zk.ZkCall.SessionLost;
import java.io.IOException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.Stat;

/**
 * How a {@link ZooKeeperLog} becomes a member of the cluster, at open and again after its
 * session or its fencing token was lost: the member znode, the others' resyncs held back, the
 * node znode and its token, the chunks. Called with the log's lock held.
 */
final class Membership {
    private final ZooKeeperLog log;

    Membership(ZooKeeperLog log) {
        this.log = log;
    }

    /**
     * Becomes a member again: the member znode (waiting while an old session or a recoverer holds
     * it), the fencing token bumped, the chunks written. At open ({@code initial}) the marks are
     * read from the chunks; later they are written from memory.
     */
    void join(boolean initial, boolean allDirty, long deadline) throws IOException {
        long slotDeadline = initial ? Math.min(deadline, System.nanoTime()
                + TimeUnit.MILLISECONDS.toNanos(log.config.sessionTimeoutMs() * 3L / 2) + TimeUnit.SECONDS.toNanos(2)) : deadline;
        while (true) {
            try {
                if (log.session.expired()) {
                    log.session.renew();
                }
                log.joined = false;
                takeMemberSlot(initial, slotDeadline);
                // the others' resyncs held back before this node writes again (read after the member
                // znode exists: a resync published later waits for this node's acknowledgement)
                log.recovering.joined();
                log.publisher.joined();
                log.recovering.read(deadline);
                if (initial && log.recovering.entryNodes().contains(log.node)) {
                    // an entry of this node's from before a crash: its resync starts over (published again before it copies)
                    log.publisher.writeEntry(log.node, new BitSet(), deadline);
                    log.recovering.read(deadline);
                }
                Stat st = log.call(h -> h.exists(log.z.node(log.node), false), deadline);
                if (initial) {
                    log.image = new BitSet();
                    // a new log (made by this open, so any chunks are this open's): copy everything once
                    if (allDirty) {
                        log.image.set(0, Math.toIntExact(log.regions));
                    }
                } else if (st == null || st.getVersion() != log.fence) {
                    // taken over while away: every own mark is resynced here again
                    log.work.add(log.image);
                    log.fenced++;
                }
                List<MultiSplitter.Sized> ops = new ArrayList<>();
                if (st == null) {
                    ops.add(MultiSplitter.Sized.of(Op.create(log.z.node(log.node), ZnodeLayout.text("node=" + log.node + "\n"),
                            ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT), 16));
                    for (int c = 0; c < log.chunkCount; c++) {
                        ops.add(log.createChunk(c));
                    }
                    log.runBatches(ops, MultiSplitter.Sized.of(Op.check(log.z.member(log.node), -1), 0), deadline, false);
                    log.fence = 0;
                } else {
                    Set<String> have = new HashSet<>(log.call(h -> h.getChildren(log.z.node(log.node), false), deadline));
                    if (initial) {
                        for (int c = 0; c < log.chunkCount; c++) {
                            String p = log.z.chunk(log.node, c);
                            if (have.contains(p.substring(p.lastIndexOf('/') + 1))) {
                                int cc = c;
                                ZnodeLayout.readChunk(log.call(h -> h.getData(log.z.chunk(log.node, cc), false, null), deadline), c, log.regions, log.image);
                            }
                        }
                    }
                    Stat bumped = log.call(h -> h.setData(log.z.node(log.node), ZnodeLayout.text("node=" + log.node + "\n"), -1), deadline);
                    log.fence = bumped.getVersion();
                    for (int c = 0; c < log.chunkCount; c++) {
                        String p = log.z.chunk(log.node, c);
                        if (!have.contains(p.substring(p.lastIndexOf('/') + 1))) {
                            ops.add(log.createChunk(c));
                        } else if (!initial) {
                            ops.add(log.setChunk(c));
                        }
                    }
                    log.runBatches(ops, log.fenceCheck(), deadline, false);
                }
                log.joined = true;
                if (!initial) {
                    log.rejoins++;
                }
                return;
            } catch (SessionLost | Conflict | Fenced e) {
                if (System.nanoTime() > deadline) {
                    throw log.timeout();
                }
                // start over: a new session, or a state another node changed under us
            }
        }
    }

    private void takeMemberSlot(boolean initial, long slotDeadline) throws IOException {
        while (true) {
            try {
                log.call(h -> h.create(log.z.member(log.node), ZnodeLayout.memberBytes(log.node, -1), ZooDefs.Ids.OPEN_ACL_UNSAFE,
                        CreateMode.EPHEMERAL), slotDeadline);
                log.legState.joined();
                return;
            } catch (Conflict e) {
                Stat s = log.call(h -> h.exists(log.z.member(log.node), false), slotDeadline);
                if (s != null && s.getEphemeralOwner() == log.session.sessionId()) {
                    log.legState.joined();
                    return; // ours: a create retried after a lost reply
                }
            }
            if (System.nanoTime() > slotDeadline) {
                if (initial) {
                    throw new InvalidArgumentException("mirror: node '" + log.node + "' is already a live member of " + log.describe()
                            + " (another process with node=" + log.node + "?); give each node its own node=NAME");
                }
                throw log.timeout();
            }
            log.session.awaitChange(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200));
            ZkSession.sleepQuietly(200);
        }
    }

}
