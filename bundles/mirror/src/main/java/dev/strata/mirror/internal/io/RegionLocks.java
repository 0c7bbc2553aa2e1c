package dev.strata.mirror.internal.io;

import java.util.concurrent.locks.StampedLock;

/**
 * Orders writes with resync: a write holds its regions' stripes shared, a resync copy holds its
 * region's stripe exclusively, so a copy never reads a region while a write to it is in flight
 * and never lands after a newer write. Stripes are always taken in ascending order.
 * {@link StampedLock}s, not reentrant read-write locks: a shared hold is one CAS, where a
 * {@code ReentrantReadWriteLock} keeps per-thread hold counts that it allocates again on most
 * acquisitions; nothing here is reentrant (a write holds its stripes once, a copy one stripe).
 */
final class RegionLocks {
    private static final int STRIPES = 1024;
    private final StampedLock[] stripes = new StampedLock[STRIPES];

    RegionLocks() {
        for (int i = 0; i < STRIPES; i++) {
            stripes[i] = new StampedLock();
        }
    }

    /** Locks the stripes of regions {@code [first, last]} shared. */
    void lockShared(int first, int last) {
        if (last - first + 1 >= STRIPES) {
            for (int s = 0; s < STRIPES; s++) {
                stripes[s].readLock();
            }
            return;
        }
        int a = first % STRIPES;
        int b = last % STRIPES;
        if (a <= b) {
            for (int s = a; s <= b; s++) {
                stripes[s].readLock();
            }
        } else { // wraps: ascending order is 0..b then a..end
            for (int s = 0; s <= b; s++) {
                stripes[s].readLock();
            }
            for (int s = a; s < STRIPES; s++) {
                stripes[s].readLock();
            }
        }
    }

    void unlockShared(int first, int last) {
        if (last - first + 1 >= STRIPES) {
            for (int s = 0; s < STRIPES; s++) {
                stripes[s].tryUnlockRead();
            }
            return;
        }
        for (int r = first; r <= last; r++) {
            stripes[r % STRIPES].tryUnlockRead();
        }
    }

    void lockExclusive(int region) {
        stripes[region % STRIPES].writeLock();
    }

    void unlockExclusive(int region) {
        stripes[region % STRIPES].tryUnlockWrite();
    }
}
