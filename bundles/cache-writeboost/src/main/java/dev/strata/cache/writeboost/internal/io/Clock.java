package dev.strata.cache.writeboost.internal.io;

/** Time, injectable so that tests can drive the daemons' pacing. */
public interface Clock {
    /** Monotonic nanoseconds. */
    long nanoTime();

    Clock SYSTEM = System::nanoTime;
}
