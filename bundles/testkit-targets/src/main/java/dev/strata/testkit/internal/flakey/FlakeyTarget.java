package dev.strata.testkit.internal.flakey;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceIOException;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Requests;
import dev.strata.testkit.internal.common.ForwardingTarget;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * The {@code flakey} target (after dm-flakey): passes requests to the device below while
 * <em>up</em>, and while <em>down</em> fails, drops or corrupts the requests its modes name.
 * The device cycles {@code up} ms up, then {@code down} ms down, from its creation; the
 * {@code state} message forces it up or down ({@code auto} returns to the cycle). Faults apply
 * only to requests overlapping the region, after {@code skip} matching requests, at most
 * {@code count} times, each with {@code probability} percent (deterministic from {@code seed}).
 */
final class FlakeyTarget extends ForwardingTarget {
    private enum Forced { AUTO, UP, DOWN }

    private final FlakeyConfig config;
    private final LongSupplier clock;
    private final long start;
    private volatile Forced forced = Forced.AUTO;
    private final AtomicLong matched = new AtomicLong();
    private final AtomicLong faults = new AtomicLong();
    private final AtomicLong reads = new AtomicLong();
    private final AtomicLong writes = new AtomicLong();

    FlakeyTarget(String name, BlockDevice lower, FlakeyConfig config, LongSupplier clock) {
        super(name, lower);
        this.config = config;
        this.clock = clock;
        this.start = clock.getAsLong();
    }

    @Override
    public String type() {
        return FlakeyConfig.TYPE;
    }

    /** Whether the device is down now. */
    boolean down() {
        Forced f = forced;
        if (f != Forced.AUTO) {
            return f == Forced.DOWN;
        }
        if (config.downNanos() == 0) {
            return false;
        }
        if (config.upNanos() == 0) {
            return true;
        }
        long phase = Math.floorMod(clock.getAsLong() - start, config.upNanos() + config.downNanos());
        return phase >= config.upNanos();
    }

    /** Decides whether a request of this kind at this range faults now, counting it. */
    private boolean faults(FaultMode mode, long offset, long length) {
        if (!config.modes().contains(mode) || !down()) {
            return false;
        }
        if (offset >= 0 && (offset + length <= config.regionOffset() || offset >= config.regionOffset() + config.regionLength())) {
            return false;
        }
        long n = matched.getAndIncrement();
        if (n < config.skip()) {
            return false;
        }
        if (config.probability() < 100 && Math.floorMod(mix(config.seed() + n * 0x9E3779B97F4A7C15L), 100L) >= config.probability()) {
            return false;
        }
        if (config.count() >= 0) {
            long f;
            do {
                f = faults.get();
                if (f >= config.count()) {
                    return false;
                }
            } while (!faults.compareAndSet(f, f + 1));
            return true;
        }
        faults.incrementAndGet();
        return true;
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    private DeviceIOException error(long offset, String what, FaultMode mode) {
        return new DeviceIOException(name, offset, "injected " + what + " error (flakey down, mode " + mode.label() + ")");
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        Requests.check(this, offset, dst.remaining());
        reads.incrementAndGet();
        int length = dst.remaining();
        if (faults(FaultMode.ERROR_READS, offset, length)) {
            throw error(offset, "read", FaultMode.ERROR_READS);
        }
        int pos = dst.position();
        lower.read(offset, dst);
        if (faults(FaultMode.CORRUPT_READS, offset, length)) {
            corrupt(dst, pos, offset, length);
        }
    }

    @Override
    public void write(long offset, ByteBuffer src, int flags) throws IOException {
        Requests.check(this, offset, src.remaining());
        writes.incrementAndGet();
        int length = src.remaining();
        if (faults(FaultMode.ERROR_WRITES, offset, length)) {
            throw error(offset, "write", FaultMode.ERROR_WRITES);
        }
        if (faults(FaultMode.DROP_WRITES, offset, length)) {
            src.position(src.limit());
            return;
        }
        if (faults(FaultMode.CORRUPT_WRITES, offset, length)) {
            ByteBuffer copy = ByteBuffer.allocate(length);
            copy.put(src).flip();
            corrupt(copy, 0, offset, length);
            lower.write(offset, copy, flags);
            return;
        }
        lower.write(offset, src, flags);
    }

    @Override
    public void writeZeroes(long offset, long length, int flags) throws IOException {
        Requests.check(this, offset, length);
        writes.incrementAndGet();
        if (faults(FaultMode.ERROR_WRITES, offset, length)) {
            throw error(offset, "write zeroes", FaultMode.ERROR_WRITES);
        }
        if (faults(FaultMode.DROP_WRITES, offset, length)) {
            return;
        }
        lower.writeZeroes(offset, length, flags);
    }

    @Override
    public void discard(long offset, long length) throws IOException {
        Requests.check(this, offset, length);
        writes.incrementAndGet();
        if (faults(FaultMode.ERROR_WRITES, offset, length)) {
            throw error(offset, "discard", FaultMode.ERROR_WRITES);
        }
        if (faults(FaultMode.DROP_WRITES, offset, length)) {
            return;
        }
        lower.discard(offset, length);
    }

    @Override
    public void flush() throws IOException {
        if (faults(FaultMode.ERROR_WRITES, -1, 0)) {
            throw error(-1, "flush", FaultMode.ERROR_WRITES);
        }
        lower.flush();
    }

    /** Changes byte {@code corrupt_byte} of every logical block inside the request. */
    private void corrupt(ByteBuffer buf, int pos, long offset, int length) {
        int bs = lower.blockSize();
        long first = offset - Math.floorMod(offset, bs) + config.corruptByte();
        for (long at = first; at < offset + length; at += bs) {
            if (at >= offset) {
                int i = pos + (int) (at - offset);
                byte old = buf.get(i);
                buf.put(i, config.corruptValue() < 0 ? (byte) ~old : (byte) config.corruptValue());
            }
        }
    }

    /** {@code state=up|down|auto}: forces the device up or down, or back to its up/down cycle. */
    @Override
    public void message(String key, String value) {
        if (!key.equals("state")) {
            throw new InvalidArgumentException("flakey: no tunable '" + key + "'; use state=up|down|auto");
        }
        try {
            forced = Forced.valueOf(value.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new InvalidArgumentException("flakey: state=" + value + " is unknown; use up, down or auto");
        }
    }

    @Override
    public Map<String, String> status() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("state", down() ? "down" : "up");
        m.put("forced", forced.name().toLowerCase(Locale.ROOT));
        m.put("mode", config.modeLabel());
        m.put("up_ms", Double.toString(config.upNanos() / 1e6));
        m.put("down_ms", Double.toString(config.downNanos() / 1e6));
        m.put("reads", Long.toString(reads.get()));
        m.put("writes", Long.toString(writes.get()));
        m.put("matched", Long.toString(matched.get()));
        m.put("faults", Long.toString(faults.get()));
        return m;
    }

    /** Closing flushes the device below unless the device is down for writes (then it is a fault, not a hang). */
    @Override
    public void close() throws IOException {
        flush();
    }
}
