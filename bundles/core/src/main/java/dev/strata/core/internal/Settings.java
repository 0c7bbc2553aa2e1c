package dev.strata.core.internal;

import java.util.concurrent.TimeUnit;

/**
 * The core's tunables (configuration PID {@code dev.strata.core}).
 *
 * @param gateTimeoutNanos  how long a request may wait at a closed gate (and how long a suspend
 *                          waits for in-flight I/O to drain) before it fails
 * @param detachWaitNanos   how long the thread that unregisters a target factory is held while
 *                          the devices using it are suspended and their targets closed
 */
public record Settings(long gateTimeoutNanos, long detachWaitNanos) {
    public static final long DEFAULT_GATE_TIMEOUT_SECONDS = 120;
    public static final long DEFAULT_DETACH_WAIT_SECONDS = 30;

    public static Settings defaults() {
        return of(DEFAULT_GATE_TIMEOUT_SECONDS, DEFAULT_DETACH_WAIT_SECONDS);
    }

    public static Settings of(long gateTimeoutSeconds, long detachWaitSeconds) {
        return new Settings(TimeUnit.SECONDS.toNanos(Math.max(1, gateTimeoutSeconds)),
                TimeUnit.SECONDS.toNanos(Math.max(0, detachWaitSeconds)));
    }
}
