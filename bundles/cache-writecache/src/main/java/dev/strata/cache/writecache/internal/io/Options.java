package dev.strata.cache.writecache.internal.io;

import dev.strata.api.WritebackController;
import dev.strata.cache.support.time.Clock;
import java.util.function.Function;

/**
 * How a cache is run, beyond its tunables.
 *
 * @param background  run the background daemon (writeback between the watermarks, autocommit);
 *                    tests drive it by hand instead ({@link WritecacheTarget#backgroundOnce()})
 * @param lazyFuaData the data write of a FUA request starts only when a commit waits for it (the
 *                    latest moment the design allows), instead of on a pool thread; tests use it
 *                    to make the overlap of data writes and commits deterministic
 * @param commitOrder where a commit waits for in-flight data writes; only tests change it
 * @param clock       the clock of autocommit_time, max_age, pause_writeback, pacing and latencies
 * @param controllers the {@link WritebackController} services registered now, by name (null: none)
 * @param oneIoPerBlock every block of a multi-block write is its own cache-device I/O (the
 *                    allocation before dm-writecache 5.6); benchmarks only, to show what
 *                    contiguous allocation gains
 * @param unsortedWriteback a writeback batch is written in the order it was chosen, one backing
 *                    write per block (no sort, no merge); benchmarks only, the baseline of the
 *                    sorted, merged writeback (dm-writecache before the 2019 "sort the blocks for
 *                    writeback_all" patch)
 */
public record Options(boolean background, boolean lazyFuaData, CommitOrder commitOrder, Clock clock,
        Function<String, WritebackController> controllers, boolean oneIoPerBlock, boolean unsortedWriteback) {

    /** Where a commit waits for in-flight data writes (see {@link Committer}). */
    public enum CommitOrder {
        /** Wait, then flush (correct). */
        WAIT_THEN_FLUSH,
        /** Flush, then wait: the pre-2020 order. Test-only mutation. */
        FLUSH_THEN_WAIT
    }

    public static Options defaults() {
        return new Options(true, false, CommitOrder.WAIT_THEN_FLUSH, Clock.SYSTEM, null, false, false);
    }

    /** No background thread: writeback and autocommit run only when asked. */
    public Options manual() {
        return new Options(false, lazyFuaData, commitOrder, clock, controllers, oneIoPerBlock, unsortedWriteback);
    }

    public Options withLazyFuaData() {
        return new Options(background, true, commitOrder, clock, controllers, oneIoPerBlock, unsortedWriteback);
    }

    public Options withClock(Clock c) {
        return new Options(background, lazyFuaData, commitOrder, c, controllers, oneIoPerBlock, unsortedWriteback);
    }

    /** Writeback paced by the controller services {@code lookup} finds by name (the factory's DS references). */
    public Options withControllers(Function<String, WritebackController> lookup) {
        return new Options(background, lazyFuaData, commitOrder, clock, lookup, oneIoPerBlock, unsortedWriteback);
    }

    /** One cache-device I/O per block (benchmarks only: the pre-5.6 allocation, for comparison). */
    public Options withOneIoPerBlock() {
        return new Options(background, lazyFuaData, commitOrder, clock, controllers, true, unsortedWriteback);
    }

    /** Writeback batches unsorted and unmerged, one backing write per block (benchmarks only: the baseline). */
    public Options withUnsortedWriteback() {
        return new Options(background, lazyFuaData, commitOrder, clock, controllers, oneIoPerBlock, true);
    }

    /** The pre-2020 commit order (flush before the wait). Package-private: for the mutation test only. */
    Options pre2020CommitOrder() {
        return new Options(background, lazyFuaData, CommitOrder.FLUSH_THEN_WAIT, clock, controllers, oneIoPerBlock, unsortedWriteback);
    }
}
