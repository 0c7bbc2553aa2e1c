package dev.strata.cache.readcache.internal.io;

import dev.strata.api.BlockDevice;
import dev.strata.cache.support.commit.GroupCommit;
import dev.strata.cache.support.time.Clock;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Makes promoted data durable on the cache device with shared flushes. A promotion writes its
 * slot's data without FUA and then calls {@link #durable}: concurrent promotions share one cache
 * device flush (cache-support's {@link GroupCommit}) instead of paying a FUA write each — at
 * iodepth 32 a flush covers many promotions, where one FUA write each made every promoted read
 * wait for its own device sync. Rule 2 of the ordering (data before entry) is unchanged: the
 * entry is written only after {@code durable} returned.
 */
final class PromotionCommit {
    private static final long WAIT_NANOS = 30_000_000_000L;

    private final BlockDevice cache;
    private final Clock clock;
    private final GroupCommit group;
    /** Promotion data writes completed so far (a ticket per write). */
    private final AtomicLong written = new AtomicLong();
    /** Every write with a ticket up to this is durable. */
    private final AtomicLong flushed = new AtomicLong();

    PromotionCommit(String name, BlockDevice cache, Clock clock) {
        this.cache = cache;
        this.clock = clock;
        this.group = new GroupCommit(name, clock);
    }

    /**
     * The caller's data write has completed: returns once it is durable.
     *
     * @throws dev.strata.api.DeviceTimeoutException no flush within 30 s (the promotion is given up)
     * @throws IOException the cache device's flush failed
     */
    void durable() throws IOException {
        durableUpTo(wrote());
    }

    /**
     * Data writes that need not be durable now have completed (a write's copies, {@code
     * write_promote}): returns their ticket, for a later {@link #durableUpTo}.
     */
    long wrote() {
        return written.incrementAndGet();
    }

    /** Every data write completed so far (its ticket taken), for {@link #durableUpTo}. */
    long lastTicket() {
        return written.get();
    }

    /** Returns once every data write with a ticket up to {@code mine} is durable (a shared flush, or none). */
    void durableUpTo(long mine) throws IOException {
        group.commit(() -> flushed.get() >= mine, () -> {
            long upTo = written.get(); // every ticket up to here was written before this flush starts
            cache.flush();
            flushed.accumulateAndGet(upTo, Math::max);
        }, clock.nanoTime() + WAIT_NANOS);
    }

    /** Device flushes done for promotions. */
    long flushes() {
        return group.leaderFlushes();
    }
}
