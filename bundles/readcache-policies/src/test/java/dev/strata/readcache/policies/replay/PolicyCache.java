package dev.strata.readcache.policies.replay;

import dev.strata.api.ReadCachePolicy;
import dev.strata.api.ReadCachePolicy.Contents;
import dev.strata.api.ReadCachePolicy.Instance;
import java.util.Arrays;
import java.util.Map;

/**
 * A simulated block cache driving a real {@link ReadCachePolicy} the way a read cache does:
 * it owns the slot → block table and the block → slot index, asks the policy on every miss and
 * promotes into the slot it returns (evicting that slot's block first), and tells it of hits.
 * Promotions complete at once (no pending I/O in a replay).
 */
final class PolicyCache implements Simulator {
    private final long[] slotKeys;
    private final LongIntMap index;
    private final Instance policy;

    PolicyCache(ReadCachePolicy policy, int capacity, Map<String, String> tunables) {
        slotKeys = new long[capacity];
        Arrays.fill(slotKeys, Contents.EMPTY);
        index = new LongIntMap(capacity);
        this.policy = policy.open(Contents.of(slotKeys), tunables);
    }

    @Override
    public boolean access(long key) {
        int slot = index.get(key);
        if (slot != LongIntMap.ABSENT) {
            policy.onHit(slot);
            return true;
        }
        slot = policy.onMiss(key);
        if (slot == Instance.REJECT) {
            return false;
        }
        long old = slotKeys[slot];
        if (old != Contents.EMPTY) {
            index.remove(old);
        }
        slotKeys[slot] = key;
        index.put(key, slot);
        policy.onInsert(slot, key);
        return false;
    }

    Instance policy() {
        return policy;
    }

    int cached() {
        return index.size();
    }
}
