package dev.strata.cache.support.time;

import dev.strata.api.DeviceIOException;
import dev.strata.api.DeviceTimeoutException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;

/**
 * The moment a wait gives up, on an injected clock. Every wait of a cache has one (a request
 * never hangs): {@link #await} waits on a condition in slices of at most {@link #SLICE_NANOS}
 * real time and re-reads the clock after each, so a fake clock moved forward by a test ends the
 * wait as a real one would.
 */
public final class Deadline {
    /** Longest single real-time wait: a wait re-checks its clock and its caller's state this often. */
    public static final long SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    private final Clock clock;
    private final long at;

    private Deadline(Clock clock, long at) {
        this.clock = clock;
        this.at = at;
    }

    public static Deadline after(Clock clock, long amount, TimeUnit unit) {
        return new Deadline(clock, at(clock, amount, unit));
    }

    /** The clock time {@code amount} from now: the allocation-free form for request paths. */
    public static long at(Clock clock, long amount, TimeUnit unit) {
        return clock.nanoTime() + unit.toNanos(amount);
    }

    /** When this deadline is, on its clock. */
    public long nanoTime() {
        return at;
    }

    /** Nanoseconds left (≤ 0: expired). */
    public long remaining() {
        return at - clock.nanoTime();
    }

    public boolean expired() {
        return remaining() <= 0;
    }

    /**
     * Waits on {@code c} (its lock held) for one slice, or less if the deadline is nearer.
     *
     * @param device names the device in the exception
     * @param what   what is waited for ("writeback to free log space")
     * @throws DeviceTimeoutException the deadline has passed
     * @throws DeviceIOException      interrupted (the interrupt status is kept)
     */
    public void await(Condition c, String device, String what) throws DeviceIOException {
        await(c, clock, at, device, what);
    }

    /** {@link #await(Condition, String, String)} for a deadline {@code at} on {@code clock}. */
    public static void await(Condition c, Clock clock, long at, String device, String what) throws DeviceIOException {
        long left = at - clock.nanoTime();
        if (left <= 0) {
            throw new DeviceTimeoutException(device, -1, "timed out waiting for " + what);
        }
        try {
            c.awaitNanos(Math.min(left, SLICE_NANOS));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DeviceIOException(device, -1, "interrupted while waiting for " + what);
        }
    }
}
