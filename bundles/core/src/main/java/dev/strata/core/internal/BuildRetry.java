package dev.strata.core.internal;

import java.util.concurrent.TimeUnit;

/**
 * A build that failed with an I/O error is tried again by itself, with a backoff from 1 s up to
 * 30 s, until it succeeds or the device is removed. Such failures are usually passing: an
 * {@code nbd} target whose server is not up yet (an export of this same process starts after the
 * devices: core's start level is below the NBD bundle's), a file system not mounted yet. Before,
 * nothing built the device again unless another device or a factory came up later, so after a
 * restart such a device, and everything stacked on it, stayed down. Argument errors are not
 * retried: they fail the same way every time.
 */
final class BuildRetry {
    static final long FIRST_NANOS = TimeUnit.SECONDS.toNanos(1);
    static final long MAX_NANOS = TimeUnit.SECONDS.toNanos(30);
    private static final long NONE = Long.MAX_VALUE;

    /** One device's backoff; changed by its builds (under the device's op lock), read by the ticker. */
    static final class Backoff {
        private volatile long dueNanos = NONE;
        private long delayNanos;

        void failed(long nowNanos) {
            delayNanos = delayNanos == 0 ? FIRST_NANOS : Math.min(delayNanos * 2, MAX_NANOS);
            dueNanos = nowNanos + delayNanos;
        }

        void clear() {
            delayNanos = 0;
            dueNanos = NONE;
        }

        boolean due(long nowNanos) {
            long due = dueNanos;
            return due != NONE && nowNanos - due >= 0;
        }
    }

    private final Core core;

    BuildRetry(Core core) {
        this.core = core;
    }

    /** Schedules the build of every waiting device whose retry is due (the ticker calls it every second). */
    void runOnce(long nowNanos) {
        for (MappedDevice d : core.graph.waiting()) {
            if (d.buildRetry.due(nowNanos)) {
                core.reconciler.schedule(d);
            }
        }
    }
}
