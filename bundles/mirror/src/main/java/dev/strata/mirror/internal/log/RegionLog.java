package dev.strata.mirror.internal.log;

import java.io.IOException;
import java.util.BitSet;

/**
 * Where a mirror keeps which regions may differ between its legs, and which legs are in sync.
 * Every call that changes the log is one durable round trip (counted by {@link #roundTrips()}):
 * {@link #commit} carries any number of marks and clears at once, which is what makes the
 * integrated flush possible. Calls are made by one thread at a time (the region tracker's
 * committer), so implementations need no locking of their own.
 */
public interface RegionLog {

    /** {@code core} or {@code disk:DEV}, for status. */
    String describe();

    /** Whether the log survives a restart (a {@code core} log does not: everything is resynced). */
    boolean persistent();

    /**
     * Reads (or, for a blank device, formats) the log for the given geometry. A new log starts with
     * every region dirty when {@code syncNew} (the legs are copied once), else with none.
     *
     * @throws dev.strata.api.InvalidArgumentException if the device holds another geometry or
     *         something that is not a mirror log; nothing is written then
     */
    Opened open(int legs, long regionSize, long regions, boolean syncNew) throws IOException;

    /** Makes {@code marks} set and {@code clears} unset durably, in one round trip. */
    void commit(BitSet marks, BitSet clears) throws IOException;

    /** Makes the in-sync mask durable (bit i = leg i in sync), in one round trip. */
    void writeLegState(int inSyncMask) throws IOException;

    /** Durable round trips so far. */
    long roundTrips();

    /**
     * What the log held at open: the dirty regions, the in-sync legs, and whether it was new
     * (nothing known: the legs may differ anywhere).
     */
    record Opened(BitSet dirty, int inSyncMask, boolean fresh) {
    }
}
