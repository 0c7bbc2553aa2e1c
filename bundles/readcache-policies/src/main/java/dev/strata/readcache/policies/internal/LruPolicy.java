package dev.strata.readcache.policies.internal;

import dev.strata.api.ReadCachePolicy;
import java.util.LinkedHashMap;
import java.util.Map;
import org.osgi.service.component.annotations.Component;

/**
 * {@code lru}: every miss is promoted, the least recently used block goes. The baseline: no
 * scan resistance (a scan larger than the cache flushes it), 9 bytes per slot.
 */
@Component(service = ReadCachePolicy.class, property = ReadCachePolicy.NAME + "=" + LruPolicy.NAME)
public class LruPolicy implements ReadCachePolicy {
    static final String NAME = "lru";

    @Override
    public String usage() {
        return "lru — promote every miss, evict the least recently used block (no tunables)";
    }

    @Override
    public Instance open(Contents contents, Map<String, String> tunables) {
        return new Lru(contents);
    }

    static final class Lru implements Instance {
        private static final int FREE = 0;
        private static final int USED = 1;
        private final LinkedSlots lists;
        private long evictions;

        Lru(Contents contents) {
            int slots = contents.slots();
            lists = new LinkedSlots(slots, 2);
            for (int s = 0; s < slots; s++) {
                lists.addLast(contents.keyAt(s) == Contents.EMPTY ? FREE : USED, s);
            }
        }

        @Override
        public int onMiss(long key) {
            int s = lists.pollFirst(FREE);
            if (s == LinkedSlots.NONE) {
                s = lists.pollFirst(USED);
                if (s == LinkedSlots.NONE) {
                    return REJECT; // every slot is pending
                }
                evictions++;
            }
            return s;
        }

        @Override
        public void onHit(int slot) {
            lists.moveToLast(USED, slot);
        }

        @Override
        public void onInsert(int slot, long key) {
            lists.addLast(USED, slot);
        }

        @Override
        public void onRemove(int slot) {
            if (lists.listOf(slot) != LinkedSlots.OFF) {
                lists.unlink(slot);
            }
            lists.addLast(FREE, slot);
        }

        @Override
        public Map<String, String> status() {
            Map<String, String> m = new LinkedHashMap<>();
            m.put("policy", NAME);
            m.put("cached", Integer.toString(lists.size(USED)));
            m.put("free", Integer.toString(lists.size(FREE)));
            m.put("evictions", Long.toString(evictions));
            return m;
        }

        @Override
        public long heapBytes() {
            return lists.heapBytes() + 32;
        }
    }
}
