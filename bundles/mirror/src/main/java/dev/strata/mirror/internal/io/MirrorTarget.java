package dev.strata.mirror.internal.io;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceIOException;
import dev.strata.api.FastZeroUnsupportedException;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Requests;
import dev.strata.api.Target;
import dev.strata.mirror.internal.log.RegionLog;
import dev.strata.mirror.internal.region.RegionTracker;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * The {@code mirror} target: writes to every leg in parallel after the region log holds their
 * regions marked, reads from one in-sync leg, flush and FUA to every leg. Resync, leg failure and
 * recovery as in docs/mirror.md.
 */
public final class MirrorTarget implements Target {
    /** How the mirror runs: tunables and, for tests, a manual mode with no threads of its own. */
    public record Options(long clearDelayNanos, ReadPolicy readPolicy, boolean nosync, boolean manual, LongSupplier clock) {
        public static Options defaults() {
            return new Options(3_000_000_000L, ReadPolicy.ROUND_ROBIN, false, false, System::nanoTime);
        }

        public Options withManual(boolean m) {
            return new Options(clearDelayNanos, readPolicy, nosync, m, clock);
        }

        public Options withNosync(boolean n) {
            return new Options(clearDelayNanos, readPolicy, n, manual, clock);
        }

        public Options withClearDelayNanos(long d) {
            return new Options(d, readPolicy, nosync, manual, clock);
        }

        public Options withReadPolicy(ReadPolicy p) {
            return new Options(clearDelayNanos, p, nosync, manual, clock);
        }

        public Options withClock(LongSupplier c) {
            return new Options(clearDelayNanos, readPolicy, nosync, manual, c);
        }
    }

    private final String name;
    private final Legs legs;
    private final RegionLog log;
    private final RegionTracker tracker;
    private final RegionLocks locks = new RegionLocks();
    private final Resync resync;
    private final long size;
    private final int blockSize;
    private final long regionSize;
    private final FanOut fanOut;
    private final MirrorDaemon daemon;
    /** A cluster log's shared leg state, or null (docs/mirror.md, "Cluster"). */
    private final ClusterLegs cluster;
    private final String[] lastError;
    private volatile ReadPolicy readPolicy;
    private volatile long legFailures;
    private volatile LegProber prober;

    private MirrorTarget(String name, List<String> legNames, List<BlockDevice> legDevices, RegionLog log, long regionSize,
            Options options) throws IOException {
        this.name = name;
        this.log = log;
        this.regionSize = regionSize;
        long s = Long.MAX_VALUE;
        int bs = 512;
        for (BlockDevice d : legDevices) {
            s = Math.min(s, d.size());
            bs = Math.max(bs, d.blockSize());
        }
        this.blockSize = bs;
        this.size = s / bs * bs;
        long regions = (size + regionSize - 1) / regionSize;
        RegionLog.Opened opened = log.open(legDevices.size(), regionSize, regions, !options.nosync());
        this.legs = new Legs(legNames, legDevices, opened.inSyncMask());
        this.lastError = new String[legDevices.size()];
        this.tracker = new RegionTracker(log, regionSize, regions, opened.dirty(), options.clearDelayNanos(), options.clock());
        tracker.clearsAllowed(legs.allInSync());
        this.resync = new Resync(legs, tracker, locks, this::legFailed, size, regionSize);
        resync.add(opened.dirty());
        this.readPolicy = options.readPolicy();
        this.fanOut = new FanOut(name, legs);
        this.cluster = log.sharedLegs() == null ? null : new ClusterLegs(name, legs, resync, tracker, log, this::flush);
        if (cluster != null) {
            // the other nodes' resyncs hold this node's writes back; this node's own are published before it copies
            resync.clustered(log);
            log.remoteGate(tracker);
        }
        this.daemon = options.manual() ? null : new MirrorDaemon(name, this);
    }

    /**
     * Opens (or creates) a mirror over {@code legDevices} with {@code log}. Formats a blank
     * {@code disk:} log; resyncs whatever the log holds dirty in the background.
     */
    public static MirrorTarget open(String name, List<String> legNames, List<BlockDevice> legDevices, RegionLog log,
            long regionSize, Options options) throws IOException {
        MirrorTarget m = new MirrorTarget(name, legNames, legDevices, log, regionSize, options);
        if (m.daemon != null) {
            m.daemon.start();
        }
        return m;
    }

    @Override
    public String type() {
        return "mirror";
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public int blockSize() {
        return blockSize;
    }

    @Override
    public boolean canFastZero() {
        for (int i = 0; i < legs.count(); i++) {
            if (!legs.device(i).canFastZero()) {
                return false;
            }
        }
        return true;
    }

    // ---- I/O

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        Requests.check(this, offset, dst.remaining());
        if (!dst.hasRemaining()) {
            return;
        }
        int first = tracker.regionOf(offset);
        int last = tracker.lastRegionOf(offset, dst.remaining());
        int excluded = 0;
        IOException failure = null;
        int position = dst.position();
        int limit = dst.limit();
        while (true) {
            // a region not yet resynced (here, or in the cluster) may differ between legs: only the resync source is read there
            ReadPolicy policy = readPolicy;
            int leg = resync.anyNeeded(first, last) || tracker.readsFromSource(first, last) ? legs.first() : legs.pick(policy, excluded);
            if (leg < 0 || (excluded & (1 << leg)) != 0) {
                throw failure != null ? failure : new DeviceIOException(name, offset, "no leg is in sync");
            }
            // only least-loaded reads need the legs' loads: round robin touches no shared counter
            boolean counted = policy == ReadPolicy.LEAST_LOADED;
            if (counted) {
                legs.load(leg, 1);
            }
            try {
                legs.device(leg).read(offset, dst);
                legs.countRead(leg);
                dst.position(limit);
                return;
            } catch (IOException e) {
                failure = e;
                excluded |= 1 << leg;
                dst.limit(limit).position(position); // the next leg reads the whole range again
                legFailed(leg, e);
            } finally {
                if (counted) {
                    legs.load(leg, -1);
                }
            }
        }
    }

    @Override
    public void write(long offset, ByteBuffer src, int flags) throws IOException {
        Requests.check(this, offset, src.remaining());
        if (!src.hasRemaining()) {
            return;
        }
        update(FanOut.Kind.WRITE, offset, src.remaining(), flags, src);
        src.position(src.limit());
    }

    @Override
    public void writeZeroes(long offset, long length, int flags) throws IOException {
        Requests.check(this, offset, length);
        if ((flags & FAST_ZERO) != 0 && !canFastZero()) {
            throw new FastZeroUnsupportedException(name);
        }
        if (length == 0) {
            return;
        }
        update(FanOut.Kind.ZEROES, offset, length, flags, null);
    }

    /**
     * Advisory, and a no-op: discarding on legs that answer reads of discarded ranges differently
     * (zeroes on one, old data on another) would make the legs disagree behind the log's back.
     */
    @Override
    public void discard(long offset, long length) {
        Requests.check(this, offset, length);
    }

    private void update(FanOut.Kind kind, long offset, long length, int flags, ByteBuffer src) throws IOException {
        log.awaitWritable(); // a cluster node without its session does not write (fencing)
        int first = tracker.regionOf(offset);
        int last = tracker.lastRegionOf(offset, length);
        tracker.beginWrite(first, last);
        try {
            while (true) {
                for (int r = first; r <= last; r++) {
                    if (resync.copiesBeforeWrite(r)) {
                        resync.syncRegion(r);
                    }
                }
                locks.lockShared(first, last);
                if (!resync.writeWaits(first, last)) {
                    break;
                }
                locks.unlockShared(first, last);
            }
            try {
                // in flight on each leg while its part runs: least-loaded reads avoid a leg still busy with writes
                onEveryLeg(fanOut.request(kind, offset, length, flags, src, readPolicy == ReadPolicy.LEAST_LOADED), offset, "write");
            } finally {
                locks.unlockShared(first, last);
            }
        } finally {
            tracker.endWrite(first, last);
        }
    }

    @Override
    public void flush() throws IOException {
        BitSet covered = tracker.flushStarted();
        onEveryLeg(fanOut.request(FanOut.Kind.FLUSH, -1, 0, 0, null, readPolicy == ReadPolicy.LEAST_LOADED), -1, "flush");
        tracker.flushCompleted(covered);
        if (!tracker.integrated()) {
            tracker.commitClearsNow();
        }
    }

    /**
     * Runs {@code op} on every leg that receives writes, in parallel. A leg that fails is taken
     * out of sync (durably) before this returns; the request fails only if no in-sync leg did it.
     */
    private void onEveryLeg(FanOut.Request request, long offset, String what) throws IOException {
        int mask = legs.writableMask();
        int inSync = legs.inSyncMask();
        fanOut.run(request, mask);
        IOException[] errors = request.errors;
        int succeeded = 0;
        IOException firstError = null;
        for (int leg = 0; leg < legs.count(); leg++) {
            if ((mask & (1 << leg)) == 0) {
                continue;
            }
            if (errors[leg] == null) {
                if ((inSync & (1 << leg)) != 0) {
                    succeeded++;
                }
            } else {
                firstError = firstError == null ? errors[leg] : firstError;
                legFailed(leg, errors[leg]);
            }
        }
        if (succeeded == 0) {
            throw new DeviceIOException(name, offset, what + " failed on every in-sync leg", firstError);
        }
        for (int leg = 0; leg < legs.count(); leg++) {
            if (errors[leg] != null && legs.state(leg) == Legs.State.IN_SYNC) {
                // a leg that could not be taken out missed this request: it must not count as done
                throw new DeviceIOException(name, offset, what + " failed on leg " + legs.name(leg) + ", which must stay in sync", errors[leg]);
            }
        }
    }

    /**
     * Takes a failed leg out of sync, durably in the log before any request that saw the failure
     * is acknowledged. The last in-sync leg is never taken out: then the request fails instead.
     */
    void legFailed(int leg, IOException cause) throws IOException {
        synchronized (legs) {
            Legs.State s = legs.state(leg);
            if (s == Legs.State.OUT_OF_SYNC) {
                return;
            }
            if (s == Legs.State.IN_SYNC && Integer.bitCount(legs.inSyncMask()) == 1) {
                return;
            }
            if (s == Legs.State.IN_SYNC && leg == legs.first() && resync.pending() > 0) {
                // the resync source: where resync has not copied yet the other legs may be stale,
                // so it stays in (the request fails) rather than make a stale leg the source
                return;
            }
            legs.state(leg, Legs.State.OUT_OF_SYNC);
            if (cluster != null) {
                cluster.failedHere(leg); // it sits out a recovery it failed in
            }
            lastError[leg] = String.valueOf(cause.getMessage());
            legFailures++;
        }
        tracker.clearsAllowed(false);
        // a cluster log shares what failed here: the legs that did not (recovering ones included)
        tracker.writeLegState(cluster != null ? legs.writableMask() : legs.inSyncMask());
    }

    // ---- resync and recovery

    /** Copies up to {@code max} regions; finishes a recovery when nothing is left. Returns the regions copied. */
    public int resyncRunOnce(int max) throws IOException {
        int n = resync.runOnce(max);
        if (resync.pending() == 0 && (n > 0 || recovering())) {
            finishResync();
        }
        return n;
    }

    /** Resyncs everything now (tests, tools). */
    public void resyncAll() throws IOException {
        while (resyncRunOnce(64) > 0) {
            // until nothing is left
        }
    }

    private boolean recovering() {
        for (int i = 0; i < legs.count(); i++) {
            if (legs.state(i) == Legs.State.RECOVERING) {
                return true;
            }
        }
        return false;
    }

    /** The copies are made durable, then recovering legs count as in sync and clears resume. */
    private void finishResync() throws IOException {
        flush();
        if (cluster != null) {
            cluster.runOnce(); // the shared state says when a recovered leg is in sync, for every node
            return;
        }
        boolean changed = false;
        synchronized (legs) {
            if (resync.pending() != 0) {
                return;
            }
            for (int i = 0; i < legs.count(); i++) {
                if (legs.state(i) == Legs.State.RECOVERING) {
                    legs.state(i, Legs.State.IN_SYNC);
                    changed = true;
                }
            }
        }
        if (changed) {
            tracker.writeLegState(legs.inSyncMask());
        }
        if (legs.allInSync()) {
            tracker.clearsAllowed(true);
            flush(); // the regions just copied become clears
        }
    }

    /** Brings a leg back: it receives writes again at once and gets every region it may have missed. */
    void recover(int leg) {
        if (cluster != null) {
            try {
                cluster.recover(leg);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            if (daemon != null) {
                daemon.wake();
            }
            return;
        }
        synchronized (legs) {
            if (legs.state(leg) != Legs.State.OUT_OF_SYNC) {
                throw new InvalidArgumentException("mirror " + name + ": leg '" + legs.name(leg) + "' is "
                        + MirrorStatus.label(legs.state(leg)) + "; only an out-of-sync leg can be recovered");
            }
            legs.state(leg, Legs.State.RECOVERING);
            lastError[leg] = null;
        }
        // every region marked may be one the leg missed (nothing is cleared while a leg is out)
        resync.add(tracker.durableSnapshot());
        if (daemon != null) {
            daemon.wake();
        }
    }

    /** Copies {@code regions} again from the first in-sync leg ({@code mirror:resync}), in the background. */
    private void resync(BitSet regions) {
        resync.add(regions);
        if (daemon != null) {
            daemon.wake();
        }
    }

    /**
     * Recovers the legs {@code remote} names by themselves once they can be read again (remote
     * legs, whose nbd target reconnects); see {@link LegProber}. Manual mirrors (tests) get a
     * prober without a thread, driven by {@link #proberRunOnce}.
     */
    public void autoRecover(java.util.function.IntPredicate remote, long intervalMillis) {
        if (prober != null) {
            return;
        }
        LegProber p = new LegProber(name, legs, remote, intervalMillis, this::recover, blockSize);
        prober = p;
        if (daemon != null) {
            p.start();
        } else {
            p.survey();
        }
    }

    /** One round of the prober (tests); returns the legs it recovered. */
    public int proberRunOnce(long nowMillis) {
        LegProber p = prober;
        return p == null ? 0 : p.runOnce(nowMillis);
    }

    /**
     * The log's background work (cluster logs: rejoin, take dead nodes' marks over); regions that
     * became this node's to resync are held marked and queued. Returns whether there were any.
     */
    public boolean clusterRunOnce() throws IOException {
        log.maintain();
        boolean legsChanged = cluster != null && cluster.runOnce();
        BitSet work = log.takeResyncWork();
        if (work.isEmpty()) {
            return legsChanged;
        }
        tracker.adopt(work);
        log.resyncWorkAdopted(work);
        resync.add(work);
        log.resyncWorkQueued(work); // until here the status counted them as the log's
        if (daemon != null) {
            daemon.wake();
        }
        return true;
    }

    /** A clear-only commit if clears have waited long enough (the daemon calls this). */
    public boolean clearerRunOnce() throws IOException {
        return tracker.clearerRunOnce();
    }

    boolean hasResyncWork() {
        return resync.pending() > 0 || recovering();
    }

    // ---- lifecycle, status, messages

    @Override
    public void suspend() throws IOException {
        flush();
        tracker.commitAll();
    }

    @Override
    public void close() throws IOException {
        LegProber p = prober;
        if (p != null) {
            p.stop();
        }
        if (daemon != null) {
            daemon.stop();
        }
        try {
            flush();
            tracker.commitAll();
        } finally {
            fanOut.close();
            log.close();
        }
    }

    @Override
    public void message(String key, String value) throws IOException {
        switch (key) {
            case "recover" -> {
                try {
                    recover(leg(key, value));
                } catch (java.io.UncheckedIOException e) {
                    throw e.getCause(); // the cluster log's request
                }
            }
            case "fail" -> {
                int leg = leg(key, value);
                if (legs.state(leg) == Legs.State.IN_SYNC && Integer.bitCount(legs.inSyncMask()) == 1) {
                    throw new InvalidArgumentException("mirror " + name + ": '" + legs.name(leg) + "' is the last in-sync leg; it cannot be failed");
                }
                legFailed(leg, new IOException("failed by request"));
            }
            case "read_policy" -> {
                ReadPolicy p = ReadPolicy.of(value);
                if (p == null) {
                    throw new InvalidArgumentException("mirror: read_policy=" + value + " is unknown; use round_robin or least_loaded");
                }
                readPolicy = p;
            }
            case "write_fanout" -> fanOut.callerRuns(MirrorSettings.writeFanoutCaller(value));
            case "clear_delay" -> tracker.clearDelayNanos(MirrorSettings.clearDelayMillis(value) * 1_000_000L);
            case "integrated_flush" -> tracker.integrated(MirrorSettings.integratedFlush(value));
            case "resync" -> resync(ResyncRequest.regions(value, tracker));
            default -> throw new InvalidArgumentException("mirror: no tunable or action '" + key
                    + "'; use recover=LEG, fail=LEG, resync=dirty|all, read_policy=round_robin|least_loaded, write_fanout=parallel|caller, clear_delay=MS"
                    + " or integrated_flush=true|false");
        }
    }

    private int leg(String key, String value) {
        int leg = legs.find(value == null ? "" : value.trim());
        if (leg < 0) {
            List<String> names = new ArrayList<>();
            for (int i = 0; i < legs.count(); i++) {
                names.add(legs.name(i));
            }
            throw new InvalidArgumentException("mirror " + name + ": " + key + " needs a leg; '" + value + "' is none of "
                    + String.join(", ", names));
        }
        return leg;
    }

    @Override
    public Map<String, String> status() {
        Map<String, String> m = MirrorStatus.render(log, regionSize, tracker, legs, legFailures, prober, resync, readPolicy);
        m.put("write_fanout", fanOut.callerRuns() ? "caller" : "parallel");
        return m;
    }

    /** Requests in flight on leg {@code leg}, as least-loaded reads see them (tests). */
    int legLoad(int leg) {
        return legs.load(leg);
    }

    /** The regions the log holds marked now (tests). */
    public BitSet dirtyRegions() {
        return tracker.durableSnapshot();
    }
}
