package dev.strata.mirror.internal.io;

import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Orders writes with resync: a write holds its regions' stripes shared, a resync copy holds its
 * region's stripe exclusively, so a copy never reads a region while a write to it is in flight
 * and never lands after a newer write. Stripes are always taken in ascending order.
 */
final class RegionLocks {
    private static final int STRIPES = 1024;
    private final ReentrantReadWriteLock[] stripes = new ReentrantReadWriteLock[STRIPES];

    RegionLocks() {
        for (int i = 0; i < STRIPES; i++) {
            stripes[i] = new ReentrantReadWriteLock();
        }
    }

    /** Locks the stripes of regions {@code [first, last]} shared. */
    void lockShared(int first, int last) {
        if (last - first + 1 >= STRIPES) {
            for (int s = 0; s < STRIPES; s++) {
                stripes[s].readLock().lock();
            }
            return;
        }
        int a = first % STRIPES;
        int b = last % STRIPES;
        if (a <= b) {
            for (int s = a; s <= b; s++) {
                stripes[s].readLock().lock();
            }
        } else { // wraps: ascending order is 0..b then a..end
            for (int s = 0; s <= b; s++) {
                stripes[s].readLock().lock();
            }
            for (int s = a; s < STRIPES; s++) {
                stripes[s].readLock().lock();
            }
        }
    }

    void unlockShared(int first, int last) {
        if (last - first + 1 >= STRIPES) {
            for (int s = 0; s < STRIPES; s++) {
                stripes[s].readLock().unlock();
            }
            return;
        }
        for (int r = first; r <= last; r++) {
            stripes[r % STRIPES].readLock().unlock();
        }
    }

    void lockExclusive(int region) {
        stripes[region % STRIPES].writeLock().lock();
    }

    void unlockExclusive(int region) {
        stripes[region % STRIPES].writeLock().unlock();
    }
}
