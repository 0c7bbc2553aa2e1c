package dev.strata.cache.writeboost.internal.io;

import dev.strata.cache.writeboost.internal.format.Layout;
import java.io.IOException;
import java.util.concurrent.TimeUnit;

/** The periodic data sync task: seals and flushes the log every {@code sync_data_interval} seconds. */
final class DataSync {
    static final int SB = Layout.SEGMENT_BLOCKS;
    static final int BS = Layout.BLOCK;
    private final Parts parts;
    private final LogState log;
    private final Stats stats;

    DataSync(Parts parts) {
        this.parts = parts;
        this.log = parts.log;
        this.stats = parts.stats;
        this.lastSyncNanos = log.clock.nanoTime();
    }

    long lastSyncNanos;

    /** The periodic data sync: seals and flushes the log every {@code sync_data_interval} seconds. */
    public boolean syncRunOnce() throws IOException {
        Tunables t = log.tunables();
        if (t.syncDataInterval() <= 0) {
            return false;
        }
        long now = log.clock.nanoTime();
        boolean due;
        log.lock.lock();
        try {
            due = log.failure == null && !log.closed && now - lastSyncNanos >= TimeUnit.SECONDS.toNanos(t.syncDataInterval());
            if (due) {
                lastSyncNanos = now;
            }
        } finally {
            log.lock.unlock();
        }
        if (!due) {
            return false;
        }
        parts.flush.flush();
        return true;
    }
}
