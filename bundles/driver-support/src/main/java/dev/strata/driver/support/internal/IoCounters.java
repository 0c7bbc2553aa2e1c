package dev.strata.driver.support.internal;

import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/** The operation counters both file-backed targets report, in their status order. */
public final class IoCounters {
    public final LongAdder reads = new LongAdder();
    public final LongAdder readBytes = new LongAdder();
    public final LongAdder writes = new LongAdder();
    public final LongAdder writtenBytes = new LongAdder();
    public final LongAdder fuaWrites = new LongAdder();
    public final LongAdder flushes = new LongAdder();
    public final LongAdder zeroes = new LongAdder();
    public final LongAdder zeroedBytes = new LongAdder();
    public final LongAdder discards = new LongAdder();

    /** Puts {@code reads} … {@code discards} into {@code status}, in this order. */
    public void putInto(Map<String, String> status) {
        status.put("reads", reads.toString());
        status.put("read_bytes", readBytes.toString());
        status.put("writes", writes.toString());
        status.put("written_bytes", writtenBytes.toString());
        status.put("fua_writes", fuaWrites.toString());
        status.put("flushes", flushes.toString());
        status.put("zeroes", zeroes.toString());
        status.put("zeroed_bytes", zeroedBytes.toString());
        status.put("discards", discards.toString());
    }
}
