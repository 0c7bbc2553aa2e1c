package dev.strata.mirror.internal.log.zk;

import java.io.IOException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.Stat;

/**
 * This node's resync, made known to the others before it copies (the ordering of dm-raid1's
 * clustered log, where writes to a region another node recovers are delayed until it is done):
 * the regions waiting for resync are written as this node's entry in {@code PATH/recovering};
 * every live member holds its writes to them back and acknowledges the version; only then does
 * this node copy. A member that does not acknowledge is waited for until its session is gone;
 * then it is fenced (its token, the version of {@code PATH/nodes/M}, bumped), so after it rejoins
 * it resyncs its own marks itself: its writes in flight when it went away may have landed after
 * this node's copies. Copied regions leave the entry (at most every {@link #SHRINK_NANOS}, and at
 * once when nothing is left), which lets the others' waiting writes go on.
 *
 * <p>Called by the mirror's resync (one thread at a time), never waiting for another node: a
 * round that finds an acknowledgement missing copies nothing and is tried again.
 */
final class ResyncPublisher {
    static final long SHRINK_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    /** A member as it was when the version was published: its name and the session of its member znode. */
    private record Member(String name, long session) {
    }

    private final ZooKeeperLog log;
    private final BitSet published = new BitSet();
    private int publishedVersion = -1;
    private final List<Member> waitingFor = new ArrayList<>();
    private boolean acknowledged;
    private long lastShrink;
    private volatile String waitingNames = "";
    private volatile long publications;
    private volatile long fencedMembers;

    ResyncPublisher(ZooKeeperLog log) {
        this.log = log;
    }

    String waitingNames() {
        return waitingNames;
    }

    long publications() {
        return publications;
    }

    long fencedMembers() {
        return fencedMembers;
    }

    /** A new session: whatever was acknowledged was for the old one; published again before the next copy. */
    synchronized void joined() {
        acknowledged = false;
        published.clear();
        publishedVersion = -1;
    }

    /**
     * Whether regions {@code needed} may be copied now: published (again, if the set grew) and
     * acknowledged by every live member.
     */
    synchronized boolean mayCopy(BitSet needed, long deadline) throws IOException {
        if (needed.isEmpty()) {
            return true;
        }
        if (!log.joined || !log.session.connected()) {
            return false; // without a session no copy: the others may no longer hold their writes back
        }
        try {
            return publishedAndAcknowledged(needed, deadline);
        } catch (ZkCall.SessionLost | ZkCall.Fenced e) {
            return false; // rejoined first, published again then
        }
    }

    private boolean publishedAndAcknowledged(BitSet needed, long deadline) throws IOException {
        BitSet grown = (BitSet) needed.clone();
        grown.andNot(published);
        if (!grown.isEmpty() || publishedVersion < 0) {
            publish(needed, deadline);
        }
        if (!acknowledged) {
            acknowledged = checkAcks(deadline);
        }
        return acknowledged;
    }

    /** Resync copied some regions: {@code stillNeeded} is what is left; the entry shrinks (rate-limited, at once when empty). */
    synchronized void progress(BitSet stillNeeded, long deadline) throws IOException {
        if (publishedVersion < 0 || published.isEmpty() || !log.joined || !log.session.connected()) {
            return; // without a session: the entry stays until the next round's progress or the rejoin's publication
        }
        try {
            shrink(stillNeeded, deadline);
        } catch (ZkCall.SessionLost | ZkCall.Fenced e) {
            // as without a session
        }
    }

    private void shrink(BitSet stillNeeded, long deadline) throws IOException {
        BitSet kept = (BitSet) published.clone();
        kept.and(stillNeeded);
        if (kept.equals(published) || (!kept.isEmpty() && System.nanoTime() - lastShrink < SHRINK_NANOS)) {
            return;
        }
        boolean was = acknowledged;
        publish(kept, deadline);
        acknowledged = was; // a subset of what the members acknowledged
        if (kept.isEmpty()) {
            waitingFor.clear();
            waitingNames = "";
        }
    }

    /** Writes {@code regions} as this node's entry (compare-and-set on the znode's version). */
    private void publish(BitSet regions, long deadline) throws IOException {
        int v = writeEntry(log.node, regions, deadline);
        published.clear();
        published.or(regions);
        publishedVersion = v;
        lastShrink = System.nanoTime();
        acknowledged = false;
        publications++;
        // the members to wait for: those live when the version is there (a later one reads it when it joins)
        waitingFor.clear();
        List<String> members = log.call(h -> h.getChildren(log.z.members(), false), deadline);
        for (String m : members) {
            if (m.equals(log.node)) {
                continue;
            }
            Stat st = new Stat();
            byte[] d;
            try {
                d = log.call(h -> h.getData(log.z.member(m), false, st), deadline);
            } catch (ZkCall.Fenced gone) {
                continue;
            }
            if (ZnodeLayout.memberEpoch(d) == Long.MIN_VALUE) {
                continue; // a recoverer's placeholder for a dead node, not a live one
            }
            waitingFor.add(new Member(m, st.getEphemeralOwner()));
        }
        names();
    }

    /** Drops the members that acknowledged {@code publishedVersion} (or later) or are gone; true when none is left. */
    private boolean checkAcks(long deadline) throws IOException {
        for (int i = waitingFor.size() - 1; i >= 0; i--) {
            Member m = waitingFor.get(i);
            Stat ms = log.call(h -> h.exists(log.z.member(m.name()), false), deadline);
            if (ms == null || ms.getEphemeralOwner() != m.session()) {
                fence(m.name(), deadline); // its session is gone without acknowledging
                waitingFor.remove(i);
                continue;
            }
            Stat as = new Stat();
            byte[] d;
            try {
                d = log.call(h -> h.getData(log.z.ack(m.name()), false, as), deadline);
            } catch (ZkCall.Fenced none) {
                continue; // no ack yet in this session
            }
            if (as.getEphemeralOwner() == m.session() && ZnodeLayout.parseAck(d) >= publishedVersion) {
                waitingFor.remove(i);
            }
        }
        names();
        return waitingFor.isEmpty();
    }

    private void names() {
        List<String> n = new ArrayList<>();
        for (Member m : waitingFor) {
            n.add(m.name());
        }
        waitingNames = String.join(",", n);
    }

    /** Bumps {@code PATH/nodes/M}'s version: M's next request with its old token fails, and M resyncs its own marks. */
    private void fence(String m, long deadline) throws IOException {
        try {
            log.call(h -> h.setData(log.z.node(m), ZnodeLayout.text("node=" + m + "\n"), -1), deadline);
            fencedMembers++;
        } catch (ZkCall.Fenced gone) {
            // no marks left there (taken over, or stopped cleanly): nothing to fence
        }
    }

    /** Sets (or, for an empty set, removes) node {@code who}'s entry; returns the znode's new version. */
    int writeEntry(String who, BitSet regions, long deadline) throws IOException {
        while (true) {
            Stat st = new Stat();
            byte[] d;
            try {
                d = log.call(h -> h.getData(log.z.recovering(), false, st), deadline);
            } catch (ZkCall.Fenced missing) {
                try {
                    log.call(h -> h.create(log.z.recovering(), new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT),
                            deadline);
                } catch (ZkCall.Conflict raced) {
                    // made meanwhile
                }
                continue;
            }
            Map<String, BitSet> e = new TreeMap<>(ZnodeLayout.parseRecovering(d));
            if (regions.isEmpty()) {
                if (!e.containsKey(who)) {
                    return st.getVersion();
                }
                e.remove(who);
            } else {
                e.put(who, (BitSet) regions.clone());
            }
            byte[] n = ZnodeLayout.recoveringBytes(e);
            int v = st.getVersion();
            try {
                return log.call(h -> h.setData(log.z.recovering(), n, v), deadline).getVersion();
            } catch (ZkCall.Fenced changed) {
                // another node's entry changed first: again over the new one
            }
        }
    }
}
