package dev.strata.testkit.internal.delay;

import dev.strata.api.BlockDevice;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Requests;
import dev.strata.testkit.internal.common.Args;
import dev.strata.testkit.internal.common.ForwardingTarget;
import dev.strata.testkit.internal.common.Sleeper;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The {@code delay} target (after dm-delay): every read, write (incl. zeroing and discard) and
 * flush waits its configured time, then goes to the device below. Requests are delayed in
 * parallel (each on its caller's thread), so a delay adds latency, not a queue. The delays are
 * runtime tunables ({@code message read_ms 5}).
 */
final class DelayTarget extends ForwardingTarget {
    static final String TYPE = "delay";
    static final Set<String> ARGS = Set.of("device", "read_ms", "write_ms", "flush_ms");
    static final double MAX_MS = 60_000;

    /** The three delays in ns, swapped as one value. */
    record Delays(long readNanos, long writeNanos, long flushNanos) {
    }

    private final Sleeper sleeper;
    private volatile Delays delays;
    private final AtomicLong reads = new AtomicLong();
    private final AtomicLong writes = new AtomicLong();
    private final AtomicLong flushes = new AtomicLong();

    DelayTarget(String name, BlockDevice lower, Delays delays, Sleeper sleeper) {
        super(name, lower);
        this.delays = delays;
        this.sleeper = sleeper;
    }

    @Override
    public String type() {
        return TYPE;
    }

    private void delay(long nanos) throws IOException {
        if (nanos > 0) {
            sleeper.sleepUntil(sleeper.nanoTime() + nanos);
        }
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        Requests.check(this, offset, dst.remaining());
        reads.incrementAndGet();
        delay(delays.readNanos());
        lower.read(offset, dst);
    }

    @Override
    public void write(long offset, ByteBuffer src, int flags) throws IOException {
        Requests.check(this, offset, src.remaining());
        writes.incrementAndGet();
        delay(delays.writeNanos());
        lower.write(offset, src, flags);
    }

    @Override
    public void writeZeroes(long offset, long length, int flags) throws IOException {
        Requests.check(this, offset, length);
        writes.incrementAndGet();
        delay(delays.writeNanos());
        lower.writeZeroes(offset, length, flags);
    }

    @Override
    public void discard(long offset, long length) throws IOException {
        Requests.check(this, offset, length);
        writes.incrementAndGet();
        delay(delays.writeNanos());
        lower.discard(offset, length);
    }

    @Override
    public void flush() throws IOException {
        flushes.incrementAndGet();
        delay(delays.flushNanos());
        lower.flush();
    }

    @Override
    public void message(String key, String value) {
        if (!key.equals("read_ms") && !key.equals("write_ms") && !key.equals("flush_ms")) {
            throw new InvalidArgumentException("delay: no tunable '" + key + "'; use read_ms, write_ms or flush_ms");
        }
        long nanos = Args.millis(dev.strata.api.TargetArguments.of(TYPE, Map.of(key, value), ARGS), TYPE, key, 0, MAX_MS);
        Delays d = delays;
        delays = switch (key) {
            case "read_ms" -> new Delays(nanos, d.writeNanos(), d.flushNanos());
            case "write_ms" -> new Delays(d.readNanos(), nanos, d.flushNanos());
            default -> new Delays(d.readNanos(), d.writeNanos(), nanos);
        };
    }

    @Override
    public Map<String, String> status() {
        Delays d = delays;
        Map<String, String> m = new LinkedHashMap<>();
        m.put("read_ms", Double.toString(d.readNanos() / 1e6));
        m.put("write_ms", Double.toString(d.writeNanos() / 1e6));
        m.put("flush_ms", Double.toString(d.flushNanos() / 1e6));
        m.put("reads", Long.toString(reads.get()));
        m.put("writes", Long.toString(writes.get()));
        m.put("flushes", Long.toString(flushes.get()));
        return m;
    }
}
