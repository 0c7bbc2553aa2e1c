package dev.strata.readcache.policies.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.ReadCachePolicy;
import dev.strata.api.ReadCachePolicy.Contents;
import dev.strata.api.ReadCachePolicy.Instance;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * The cache side of the contract, for tests: the slot → block table, the block → slot index and
 * promotions that complete at once, checking on every miss that the policy hands out a slot the
 * contract allows (never a pending one, a free one while any is free).
 */
final class Driver {
    final long[] keys;
    final Map<Long, Integer> index = new HashMap<>();
    final boolean[] pending;
    Instance policy;
    long hits;
    long accesses;

    Driver(ReadCachePolicy policy, int slots, Map<String, String> tunables) {
        keys = new long[slots];
        Arrays.fill(keys, Contents.EMPTY);
        pending = new boolean[slots];
        this.policy = policy.open(Contents.of(keys), tunables);
    }

    Driver(ReadCachePolicy policy, int slots) {
        this(policy, slots, Map.of());
    }

    /** Reads {@code key}: a hit, or a miss promoted at once if the policy admits it. */
    boolean access(long key) {
        accesses++;
        Integer s = index.get(key);
        if (s != null) {
            policy.onHit(s);
            hits++;
            return true;
        }
        int slot = begin(key);
        if (slot != Instance.REJECT) {
            complete(slot);
        }
        return false;
    }

    /** A miss whose promotion stays pending; returns the slot or REJECT. */
    int begin(long key) {
        boolean anyFree = false;
        for (int i = 0; i < keys.length; i++) {
            anyFree |= keys[i] == Contents.EMPTY && !pending[i];
        }
        int slot = policy.onMiss(key);
        if (slot == Instance.REJECT) {
            return slot;
        }
        assertTrue(!pending[slot], "the policy handed out pending slot " + slot);
        if (anyFree) {
            assertEquals(Contents.EMPTY, keys[slot], "the policy evicted slot " + slot + " while a slot was free");
        }
        if (keys[slot] != Contents.EMPTY) {
            index.remove(keys[slot]);
        }
        keys[slot] = key;
        pending[slot] = true;
        return slot;
    }

    void complete(int slot) {
        pending[slot] = false;
        index.put(keys[slot], slot);
        policy.onInsert(slot, keys[slot]);
    }

    /** The pending promotion into {@code slot} is abandoned. */
    void abandon(int slot) {
        pending[slot] = false;
        keys[slot] = Contents.EMPTY;
        policy.onRemove(slot);
    }

    /** A write invalidates the cached {@code key}, if cached. */
    void invalidate(long key) {
        Integer s = index.remove(key);
        if (s != null) {
            keys[s] = Contents.EMPTY;
            policy.onRemove(s);
        }
    }

    boolean cached(long key) {
        return index.containsKey(key);
    }

    int slotOf(long key) {
        return index.get(key);
    }

    /** Switches to another policy live, as the cache will: a new instance over the same contents. */
    void switchTo(ReadCachePolicy next, Map<String, String> tunables) {
        policy.close();
        policy = next.open(Contents.of(keys), tunables);
    }

    double hitPercent() {
        return accesses == 0 ? 0 : 100.0 * hits / accesses;
    }

    void resetCounts() {
        hits = 0;
        accesses = 0;
    }
}
