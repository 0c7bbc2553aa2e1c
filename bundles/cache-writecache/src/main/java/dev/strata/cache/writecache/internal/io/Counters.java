package dev.strata.cache.writecache.internal.io;

import java.util.concurrent.atomic.LongAdder;

/** The counters behind dm-writecache's status figures (per block, except flushes and discards: per request). */
final class Counters {
    final LongAdder reads = new LongAdder();
    final LongAdder readHits = new LongAdder();
    final LongAdder writes = new LongAdder();
    final LongAdder writeHitsUncommitted = new LongAdder();
    final LongAdder writeHitsCommitted = new LongAdder();
    final LongAdder writesAround = new LongAdder();
    final LongAdder writesAllocated = new LongAdder();
    final LongAdder writesBlockedOnFreelist = new LongAdder();
    final LongAdder flushes = new LongAdder();
    final LongAdder flushesForwarded = new LongAdder();
    final LongAdder discards = new LongAdder();
    final LongAdder commits = new LongAdder();
    final LongAdder writtenBack = new LongAdder();
    final LongAdder writebackBatches = new LongAdder();
    final LongAdder writebackErrors = new LongAdder();
}
