package dev.strata.testkit.internal.common;

import java.util.ArrayList;
import java.util.List;

/** A clock that only moves when told; records the deadlines it was asked to wait for, never waits. */
public final class FakeSleeper implements Sleeper {
    private long now = 1_000_000_000L;
    private final List<Long> waits = new ArrayList<>();

    @Override
    public synchronized void sleepUntil(long deadlineNanos) {
        waits.add(deadlineNanos - now);
    }

    @Override
    public synchronized long nanoTime() {
        return now;
    }

    public synchronized void advance(long nanos) {
        now += nanos;
    }

    /** How long each wait would have lasted from the moment it was asked for (ns). */
    public synchronized List<Long> waits() {
        return List.copyOf(waits);
    }
}
