package dev.strata.readcache.policies.replay;

import java.util.Arrays;

/**
 * Block → slot map of the simulated cache: open addressing with linear probing and
 * backward-shift deletion over primitive arrays (keys are ≥ 0; -1 marks an empty cell).
 */
final class LongIntMap {
    static final int ABSENT = -1;
    private final long[] keys;
    private final int[] values;
    private final int mask;
    private int size;

    LongIntMap(int expected) {
        int cap = Integer.highestOneBit(Math.max(4, expected * 2 - 1)) << 1;
        keys = new long[cap];
        values = new int[cap];
        mask = cap - 1;
        Arrays.fill(keys, -1);
    }

    private int index(long key) {
        long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32)) & mask;
    }

    int get(long key) {
        for (int i = index(key);; i = (i + 1) & mask) {
            if (keys[i] == key) {
                return values[i];
            }
            if (keys[i] == -1) {
                return ABSENT;
            }
        }
    }

    void put(long key, int value) {
        for (int i = index(key);; i = (i + 1) & mask) {
            if (keys[i] == key) {
                values[i] = value;
                return;
            }
            if (keys[i] == -1) {
                keys[i] = key;
                values[i] = value;
                size++;
                return;
            }
        }
    }

    void remove(long key) {
        int i = index(key);
        while (keys[i] != key) {
            if (keys[i] == -1) {
                return;
            }
            i = (i + 1) & mask;
        }
        size--;
        // Backward shift: pull later entries of the cluster into the hole when their home allows.
        int hole = i;
        for (int j = (hole + 1) & mask; keys[j] != -1; j = (j + 1) & mask) {
            int home = index(keys[j]);
            boolean movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
            if (movable) {
                keys[hole] = keys[j];
                values[hole] = values[j];
                hole = j;
            }
        }
        keys[hole] = -1;
    }

    int size() {
        return size;
    }

    int capacity() {
        return keys.length;
    }

    /** A copy with twice the capacity. */
    LongIntMap grown() {
        LongIntMap m = new LongIntMap(keys.length);
        for (int i = 0; i < keys.length; i++) {
            if (keys[i] != -1) {
                m.put(keys[i], values[i]);
            }
        }
        return m;
    }
}
