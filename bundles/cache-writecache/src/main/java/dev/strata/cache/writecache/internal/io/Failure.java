package dev.strata.cache.writecache.internal.io;

import dev.strata.api.DeviceIOException;

/**
 * The cache device's failure latch (as dm-writecache's error state): once a write to the cache
 * device has failed, what it holds can no longer be trusted to match the index, so every later
 * request fails instead of returning or writing back stale data. Reopening recovers from what
 * was committed.
 */
final class Failure {
    private final String device;
    private volatile String reason;

    Failure(String device) {
        this.device = device;
    }

    void set(Throwable cause) {
        if (reason == null) {
            reason = String.valueOf(cause.getMessage());
        }
    }

    boolean failed() {
        return reason != null;
    }

    void check() throws DeviceIOException {
        String r = reason;
        if (r != null) {
            throw new DeviceIOException(device, -1, "the cache device failed earlier (" + r
                    + "); remove and recreate the device to recover what was committed");
        }
    }
}
