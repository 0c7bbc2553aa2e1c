package dev.strata.cache.support.time;

/**
 * Monotonic time, injected into every part that paces, times out or measures, so that a test can
 * drive it with {@link ManualClock} instead of waiting for real time to pass.
 */
@FunctionalInterface
public interface Clock {
    /** Monotonic nanoseconds (only differences mean anything). */
    long nanoTime();

    /** The JVM's monotonic clock. */
    Clock SYSTEM = System::nanoTime;
}
