package dev.strata.cache.writecache.internal.io;

/**
 * How a cache is run, beyond its tunables.
 *
 * @param background  run the background job (writeback between the watermarks, autocommit);
 *                    tests drive it by hand instead
 * @param lazyFuaData the data write of a FUA request starts only when a commit waits for it (the
 *                    latest moment the design allows), instead of on a pool thread; tests use it
 *                    to make the overlap of data writes and commits deterministic
 * @param commitOrder where a commit waits for in-flight data writes; only tests change it
 * @param nanoClock   the clock of {@code autocommit_time} (fakeable)
 */
public record Options(boolean background, boolean lazyFuaData, CommitOrder commitOrder,
        java.util.function.LongSupplier nanoClock) {

    /** Where a commit waits for in-flight data writes (see {@link Committer}). */
    public enum CommitOrder {
        /** Wait, then flush (correct). */
        WAIT_THEN_FLUSH,
        /** Flush, then wait: the pre-2020 order. Test-only mutation. */
        FLUSH_THEN_WAIT
    }

    public static Options defaults() {
        return new Options(true, false, CommitOrder.WAIT_THEN_FLUSH, System::nanoTime);
    }

    /** No background thread: writeback and autocommit run only when asked. */
    public Options manual() {
        return new Options(false, lazyFuaData, commitOrder, nanoClock);
    }

    public Options withLazyFuaData() {
        return new Options(background, true, commitOrder, nanoClock);
    }

    public Options withClock(java.util.function.LongSupplier clock) {
        return new Options(background, lazyFuaData, commitOrder, clock);
    }

    /** The pre-2020 commit order (flush before the wait). Package-private: for the mutation test only. */
    Options pre2020CommitOrder() {
        return new Options(background, lazyFuaData, CommitOrder.FLUSH_THEN_WAIT, nanoClock);
    }
}
