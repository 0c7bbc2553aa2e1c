package dev.strata.nbd.internal.exec;

import java.util.concurrent.atomic.LongAdder;

/** Per-export counters, updated by every connection's workers. */
public final class IoCounters {
    public final LongAdder bytesRead = new LongAdder();
    public final LongAdder bytesWritten = new LongAdder();
    public final LongAdder requests = new LongAdder();
    public final LongAdder errors = new LongAdder();
    /** Read, write and flush latency percentiles. */
    public final RequestLatency latency = new RequestLatency();
}
