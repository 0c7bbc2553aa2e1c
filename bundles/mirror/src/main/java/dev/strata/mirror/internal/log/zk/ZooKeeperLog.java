package dev.strata.mirror.internal.log.zk;

import dev.strata.mirror.internal.log.RegionLog;
import dev.strata.mirror.internal.log.RegionLog.LegShare;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import dev.strata.mirror.internal.log.zk.ZkCall.Fenced;
import dev.strata.mirror.internal.log.zk.ZkCall.SessionLost;

/**
 * The {@code zookeeper:HOST:PORT[,…]/PATH} log: this node's marks as persistent chunk znodes
 * under {@code PATH/nodes/NODE}, its membership as the ephemeral {@code PATH/members/NODE}
 * (layout in {@link ZnodeLayout}). A commit is one {@code multi()} (split only past
 * {@link MultiSplitter#DEFAULT_BUDGET}) of the changed chunks behind a {@code check} of this
 * node's fencing token, the version of {@code PATH/nodes/NODE}: a node that took this one's marks
 * over changed it, so a fenced node's commits fail until it has rejoined.
 *
 * <h2>Sessions</h2>
 * While the session is not connected this node does not write ({@link #awaitWritable} waits up
 * to {@code pause}): ZooKeeper expires a session only after the client has been unable to reach
 * it for longer than the client takes to notice. On expiry a new session rejoins: the member
 * znode again, the fencing token bumped, every chunk rewritten from memory. If another node took
 * the marks over meanwhile, this node resyncs all of its marks itself (its writes in flight at
 * the loss may have reached the legs after the other node's copy).
 *
 * <h2>Locking</h2>
 * {@code lock} guards the image and the token, and is held across ZooKeeper
 * calls (commits are serialised by the tracker anyway; recovery is rare). Writers take it only
 * when the session is not usable.
 */
public final class ZooKeeperLog implements RegionLog {
    static final long DEFAULT_PAUSE_NANOS = TimeUnit.SECONDS.toNanos(120);
    private static final long SCAN_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

    final ZkLogConfig config;
    final String node;
    final ZnodeLayout z;
    final ZkSession session;
    private final long legsId;
    private final int budget;
    private final long pauseNanos;
    private final ReentrantLock lock = new ReentrantLock();
    private final Recoverer recoverer = new Recoverer(this);
    private final Membership membership = new Membership(this);
    final SharedLegState legState = new SharedLegState(this);
    /** Other nodes' resyncs held back here; this node's own published before it copies (docs/mirror.md, "Cluster"). */
    final RecoveringState recovering = new RecoveringState(this);
    final ResyncPublisher publisher = new ResyncPublisher(this);
    long regions;
    int chunkCount;
    // guarded by lock
    BitSet image = new BitSet();
    volatile int fence = -1;
    /** Regions to resync on their way to the mirror, and the clears ignored meanwhile (its own monitor). */
    final ResyncWork work = new ResyncWork();
    volatile boolean joined;
    private volatile long roundTrips;
    volatile long splits;
    volatile long rejoins;
    volatile long fenced;
    volatile long recheckedCommits;
    private volatile long nextScan;
    final LongAdder paused = new LongAdder();

    public ZooKeeperLog(ZkLogConfig config, long legsId) {
        this(config, legsId, MultiSplitter.DEFAULT_BUDGET, DEFAULT_PAUSE_NANOS);
    }

    ZooKeeperLog(ZkLogConfig config, long legsId, int budget, long pauseNanos) {
        this.config = config;
        this.node = config.node();
        this.z = new ZnodeLayout(config.path());
        this.session = new ZkSession(config);
        this.legsId = legsId;
        this.budget = budget;
        this.pauseNanos = pauseNanos;
    }

    @Override
    public String describe() {
        return config.describe();
    }

    @Override
    public boolean persistent() {
        return true;
    }

    @Override
    public Opened open(int legs, long regionSize, long regions, boolean syncNew) throws IOException {
        this.regions = regions;
        this.chunkCount = ZnodeLayout.chunks(regions);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2L * config.sessionTimeoutMs()) + TimeUnit.SECONDS.toNanos(30);
        lock.lock();
        try {
            session.renew();
            session.awaitFirstConnection();
            boolean fresh = LogGeometry.createOrCheck(this, legs, regionSize, regions, legsId, deadline);
            int mask = legState.read(deadline).inSync();
            membership.join(true, fresh && syncNew, deadline);
            return new Opened((BitSet) image.clone(), mask, fresh);
        } catch (IOException | RuntimeException e) {
            session.close();
            throw e;
        } finally {
            lock.unlock();
        }
    }

    MultiSplitter.Sized fenceCheck() {
        return MultiSplitter.Sized.of(Op.check(z.node(node), fence), 0);
    }

    MultiSplitter.Sized createChunk(int c) {
        byte[] b = ZnodeLayout.chunkBytes(image, c, regions);
        return MultiSplitter.Sized.of(Op.create(z.chunk(node, c), b, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT), b.length);
    }

    MultiSplitter.Sized setChunk(int c) {
        byte[] b = ZnodeLayout.chunkBytes(image, c, regions);
        return MultiSplitter.Sized.of(Op.setData(z.chunk(node, c), b, -1), b.length);
    }

    @Override
    public void commit(BitSet marks, BitSet clears) throws IOException {
        lock.lock();
        try {
            Set<Integer> changed = new TreeSet<>();
            for (int r = marks.nextSetBit(0); r >= 0; r = marks.nextSetBit(r + 1)) {
                if (!image.get(r)) {
                    image.set(r);
                    changed.add(ZnodeLayout.chunkOf(r));
                }
            }
            for (int r = clears.nextSetBit(0); r >= 0; r = clears.nextSetBit(r + 1)) {
                if (image.get(r) && !work.isProtected(r)) {
                    image.clear(r);
                    changed.add(ZnodeLayout.chunkOf(r));
                }
            }
            if (!changed.isEmpty()) {
                writeOwnChunks(changed, true);
            }
        } finally {
            lock.unlock();
        }
    }

    /** Writes the given chunks of the image (holding the lock); a rejoin on the way writes them all. */
    void writeOwnChunks(Set<Integer> chunks, boolean counted) throws IOException {
        long deadline = System.nanoTime() + pauseNanos;
        while (true) {
            if (ensureWritable(deadline)) {
                return;
            }
            List<MultiSplitter.Sized> ops = new ArrayList<>();
            for (int c : chunks) {
                ops.add(setChunk(c));
            }
            // new marks are checked against the other nodes' resyncs this node has seen (a takeover's adoption is not a mark of a write)
            int seenVersion = recovering.version();
            MultiSplitter.Sized seen = counted ? MultiSplitter.Sized.of(Op.check(z.recovering(), seenVersion), 0) : null;
            try {
                runBatches(ops, seen == null ? List.of(fenceCheck()) : List.of(fenceCheck(), seen), deadline, counted);
                return;
            } catch (Fenced e) {
                if (seen != null) {
                    recovering.read(deadline);
                    if (recovering.version() != seenVersion) {
                        recheckedCommits++;
                        continue; // another node's resync changed: held back here now, then the commit again
                    }
                }
                joined = false;
            } catch (SessionLost e) {
                // ensureWritable renews and rejoins
            }
        }
    }

    /** The naive log's flush request: a {@code multi()} of the fencing check alone, a write the server orders and logs. */
    @Override
    public void flushRequest() throws IOException {
        withWritable(d -> {
            call(h -> h.multi(List.of(fenceCheck().op())), d);
            roundTrips++;
        });
    }

    /**
     * In a cluster the mask is the legs that did not fail on this node (in sync or recovering
     * here); the others leave the shared state for every node ({@link SharedLegState}).
     */
    @Override
    public void writeLegState(int working) throws IOException {
        withWritable(d -> {
            if (legState.legsFailed(working, d)) {
                roundTrips++;
            }
        });
    }

    @Override
    public LegShare sharedLegs() {
        return legState.current();
    }

    @Override
    public void startRecovery(int leg) throws IOException {
        withWritable(d -> legState.startRecovery(leg, d));
    }

    @Override
    public void recoveryCopied(long epoch) throws IOException {
        withWritable(d -> legState.copied(epoch, d));
    }

    @Override
    public long recoveryCopiedEpoch() {
        return legState.copiedEpoch();
    }

    private interface LegCall {
        void run(long deadline) throws IOException;
    }

    /** Runs {@code c} under the lock once joined, again after a rejoin if the session or the token was lost. */
    private void withWritable(LegCall c) throws IOException {
        lock.lock();
        try {
            long deadline = System.nanoTime() + pauseNanos;
            while (true) {
                ensureWritable(deadline);
                try {
                    c.run(deadline);
                    return;
                } catch (Fenced e) {
                    joined = false;
                } catch (SessionLost e) {
                    // rejoin, then again
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /** Holding the lock: returns once connected and joined (rejoining if need be); true if it rejoined. */
    boolean ensureWritable(long deadline) throws IOException {
        return ensureWritable(deadline, true);
    }

    private boolean ensureWritable(long deadline, boolean count) throws IOException {
        boolean rejoined = false;
        boolean counted = !count;
        while (true) {
            if (session.closed()) {
                throw new IOException("mirror: the log at " + describe() + " is closed");
            }
            if (joined && session.connected()) {
                return rejoined;
            }
            if (!counted) {
                paused.increment(); // a write or commit of the mirror waits for the session
                counted = true;
            }
            if (System.nanoTime() > deadline) {
                throw timeout();
            }
            if (session.expired() || (!joined && session.connected())) {
                membership.join(false, false, deadline);
                rejoined = true;
                continue;
            }
            session.awaitChange(deadline);
        }
    }

    @Override
    public void awaitWritable() throws IOException {
        if (joined && session.connected()) {
            return;
        }
        try {
            if (!lock.tryLock(pauseNanos, TimeUnit.NANOSECONDS)) {
                throw timeout();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for the ZooKeeper log");
        }
        try {
            ensureWritable(System.nanoTime() + pauseNanos);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void maintain() throws IOException {
        if (session.closed()) {
            return;
        }
        if (!joined || !session.connected()) {
            if (lock.tryLock()) {
                try {
                    ensureWritable(System.nanoTime() + TimeUnit.SECONDS.toNanos(1), false);
                } catch (IOException e) {
                    return; // tried again next round; writers wait meanwhile
                } finally {
                    lock.unlock();
                }
            }
            return;
        }
        long now = System.nanoTime();
        boolean scan = now - nextScan >= 0;
        boolean fired = session.takeWatchFired();
        try {
            if (fired || scan) {
                recovering.unsynced.runOnce(scan, now + pauseNanos); // a dead node's marks: read from the source, before any ack
            }
            recovering.runOnce(scan, now + pauseNanos); // the others' resyncs: held back, then acknowledged
        } catch (SessionLost | Fenced e) {
            return; // the next round rejoins
        }
        boolean legs = legState.takeFired();
        if (!fired && !legs && !scan) {
            return;
        }
        nextScan = now + SCAN_INTERVAL_NANOS;
        if (lock.tryLock()) {
            try {
                legState.runOnce(now + pauseNanos);
            } finally {
                lock.unlock();
            }
        }
        recoverer.runOnce(now + pauseNanos);
    }

    /** Takes {@code xs} (a dead node's marks) as this node's, durably; the lock is taken here. */
    void adopt(BitSet xs) throws IOException {
        lock.lock();
        try {
            work.protect(xs); // before they are written as this node's: no clear may drop them
            Set<Integer> changed = new TreeSet<>();
            for (int r = xs.nextSetBit(0); r >= 0; r = xs.nextSetBit(r + 1)) {
                if (!image.get(r)) {
                    image.set(r);
                    changed.add(ZnodeLayout.chunkOf(r));
                }
            }
            if (!changed.isEmpty()) {
                writeOwnChunks(changed, false);
            }
            work.add(xs);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void remoteGate(RemoteGate g) {
        recovering.gate(g);
        g.holdBack(recovering.heldBack());
    }

    @Override
    public boolean resyncMayCopy(BitSet needed) throws IOException {
        return publisher.mayCopy(needed, System.nanoTime() + pauseNanos);
    }

    @Override
    public void resyncProgress(BitSet stillNeeded) throws IOException {
        publisher.progress(stillNeeded, System.nanoTime() + pauseNanos);
    }

    @Override
    public BitSet takeResyncWork() {
        return work.take();
    }

    @Override
    public void resyncWorkQueued(BitSet regions) {
        work.queued(regions);
    }

    @Override
    public int resyncWorkWaiting() {
        return work.pending();
    }

    @Override
    public void resyncWorkAdopted(BitSet regions) {
        work.adopted(regions);
    }

    @Override
    public long roundTrips() {
        return roundTrips;
    }

    @Override
    public Map<String, String> status() {
        return ZkStatus.of(this, recoverer);
    }

    @Override
    public void close() {
        lock.lock();
        try {
            if (joined && session.connected() && recovering.entryNodes().contains(node)) {
                try {
                    publisher.writeEntry(node, new BitSet(), System.nanoTime() + TimeUnit.SECONDS.toNanos(5));
                } catch (IOException e) {
                    // a recoverer removes the entry of a node gone for good
                }
            }
            if (joined && session.connected() && image.isEmpty()) {
                // nothing marked: leave nothing for another node to take over
                List<MultiSplitter.Sized> ops = new ArrayList<>();
                for (int c = 0; c < chunkCount; c++) {
                    ops.add(MultiSplitter.Sized.of(Op.delete(z.chunk(node, c), -1), 0));
                }
                ops.add(MultiSplitter.Sized.of(Op.delete(z.node(node), -1), 0));
                try {
                    runBatches(ops, fenceCheck(), System.nanoTime() + TimeUnit.SECONDS.toNanos(5), false);
                } catch (IOException e) {
                    // another node takes the empty marks over later: harmless
                }
            }
        } finally {
            joined = false;
            session.close();
            lock.unlock();
        }
    }

    // ---- calls

    void runBatches(List<MultiSplitter.Sized> ops, MultiSplitter.Sized check, long deadline, boolean counted) throws IOException {
        runBatches(ops, List.of(check), deadline, counted);
    }

    void runBatches(List<MultiSplitter.Sized> ops, List<MultiSplitter.Sized> checks, long deadline, boolean counted) throws IOException {
        List<List<Op>> batches = MultiSplitter.split(checks, ops, budget);
        splits += Math.max(0, batches.size() - 1);
        for (List<Op> b : batches) {
            call(h -> h.multi(b), deadline);
            if (counted) {
                roundTrips++;
            }
        }
    }

    /** Runs {@code c}, retrying while the connection is lost (see {@link ZkSession#call}). */
    <T> T call(ZkCall<T> c, long deadline) throws IOException {
        return session.call(c, deadline, describe());
    }

    IOException timeout() {
        return ZkSession.timeout(describe());
    }

    // ---- tests (the session's id and password: ZkFixture expires it from outside)

    boolean joined() {
        return joined;
    }
}
