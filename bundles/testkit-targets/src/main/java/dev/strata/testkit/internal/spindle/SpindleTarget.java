package dev.strata.testkit.internal.spindle;

import dev.strata.api.BlockDevice;
import dev.strata.api.Requests;
import dev.strata.testkit.internal.common.ForwardingTarget;
import dev.strata.testkit.internal.common.Sleeper;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The {@code spindle} target: a {@link DiskModel} in front of a fast device, so that it behaves
 * like a rotating disk. Requests are serialized like a single actuator: each one is scheduled
 * when the previous one's service ends ({@code start = max(now, busy until)}), is served by the
 * device below, and completes at {@code start + service time}. Scheduling on a virtual timeline
 * means timer overshoot does not accumulate: the throughput is the model's. A request that
 * arrives at most {@value #TIMER_SLACK_NANOS} ns after the previous one completed is scheduled
 * as if it had arrived on time (that much is the timer's overshoot, not the caller's think time).
 *
 * <p>Public (in a non-exported package) so benchmarks can build one in-process.
 */
public final class SpindleTarget extends ForwardingTarget {
    static final String TYPE = "spindle";
    /** How late a caller may come back and still be treated as having arrived on time. */
    static final long TIMER_SLACK_NANOS = 1_000_000;
    /**
     * Waits shorter than this are skipped: the request returns a little early, and the timeline
     * (which the next request continues) keeps the throughput at the model's.
     */
    static final long MIN_SLEEP_NANOS = 100_000;

    private final DiskModel model;
    private final Sleeper sleeper;
    private final Object lock = new Object();
    private long busyUntil;
    private long requests;
    private long bytes;
    private long serviceNanos;
    private final long created;

    public SpindleTarget(String name, BlockDevice lower, DiskModel model, Sleeper sleeper) {
        super(name, lower);
        this.model = model;
        this.sleeper = sleeper;
        this.created = sleeper.nanoTime();
        this.busyUntil = created;
    }

    /** A spindle with the real clock. */
    public static SpindleTarget of(String name, BlockDevice lower, DiskModel.Params params) {
        return new SpindleTarget(name, lower, new DiskModel(params), Sleeper.SYSTEM);
    }

    @Override
    public String type() {
        return TYPE;
    }

    /** Books the actuator for a request; returns when the request completes on the timeline. */
    private long schedule(long offset, long length) {
        synchronized (lock) {
            long service = length < 0 ? 0 : model.service(offset, length);
            // a request arriving within TIMER_SLACK of the previous completion continues the
            // timeline (the caller was late only by the timer's overshoot), so QD1 streams run
            // at the model's rate instead of paying the overshoot on every request
            long now = sleeper.nanoTime();
            long start = now - busyUntil <= TIMER_SLACK_NANOS ? busyUntil : now;
            busyUntil = start + service;
            requests++;
            bytes += Math.max(0, length);
            serviceNanos += service;
            return busyUntil;
        }
    }

    private void await(long done) throws IOException {
        if (done - sleeper.nanoTime() >= MIN_SLEEP_NANOS) {
            sleeper.sleepUntil(done);
        }
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        Requests.check(this, offset, dst.remaining());
        long done = schedule(offset, dst.remaining());
        lower.read(offset, dst);
        await(done);
    }

    @Override
    public void write(long offset, ByteBuffer src, int flags) throws IOException {
        Requests.check(this, offset, src.remaining());
        long done = schedule(offset, src.remaining());
        lower.write(offset, src, flags);
        await(done);
    }

    @Override
    public void writeZeroes(long offset, long length, int flags) throws IOException {
        Requests.check(this, offset, length);
        long done = schedule(offset, length);
        lower.writeZeroes(offset, length, flags);
        await(done);
    }

    /** Discard costs no media time (a disk just forgets), but waits its turn. */
    @Override
    public void discard(long offset, long length) throws IOException {
        Requests.check(this, offset, length);
        long done = schedule(offset, -1);
        lower.discard(offset, length);
        await(done);
    }

    /** The modelled disk has no volatile cache to destage: a flush waits its turn only. */
    @Override
    public void flush() throws IOException {
        long done = schedule(-1, -1);
        lower.flush();
        await(done);
    }

    @Override
    public Map<String, String> status() {
        Map<String, String> m = new LinkedHashMap<>();
        synchronized (lock) {
            DiskModel.Params p = model.params();
            m.put("rpm", Double.toString(p.rpm()));
            m.put("seek_ms", Double.toString(p.seekNanos() / 1e6));
            m.put("transfer_mb_s", Double.toString(p.bytesPerSecond() / 1e6));
            m.put("requests", Long.toString(requests));
            m.put("seeks", Long.toString(model.seeks()));
            m.put("bytes", Long.toString(bytes));
            m.put("busy_ms", Long.toString(serviceNanos / 1_000_000));
            long elapsed = Math.max(1, sleeper.nanoTime() - created);
            m.put("utilization_pct", Long.toString(Math.min(100, serviceNanos * 100 / elapsed)));
            m.put("head", Long.toString(model.head()));
        }
        return m;
    }
}
