package dev.strata.mirror.internal.log;

import java.util.BitSet;

/**
 * The {@code core} log: memory only, so marks cost no I/O, and after any restart the mirror
 * knows nothing and resyncs every region (as dm-raid1's core log).
 */
public final class CoreLog implements RegionLog {
    @Override
    public String describe() {
        return "core";
    }

    @Override
    public boolean persistent() {
        return false;
    }

    @Override
    public Opened open(int legs, long regionSize, long regions, boolean syncNew) {
        BitSet dirty = new BitSet();
        if (syncNew) {
            dirty.set(0, Math.toIntExact(regions));
        }
        return new Opened(dirty, (1 << legs) - 1, true);
    }

    @Override
    public void commit(BitSet marks, BitSet clears) {
        // memory is the log: the tracker's own bitmap already holds the state
    }

    @Override
    public void writeLegState(int inSyncMask) {
        // nothing survives a restart anyway
    }

    @Override
    public long roundTrips() {
        return 0;
    }
}
