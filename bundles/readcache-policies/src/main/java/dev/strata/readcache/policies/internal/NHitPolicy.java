package dev.strata.readcache.policies.internal;

import dev.strata.api.ReadCachePolicy;
import java.util.LinkedHashMap;
import java.util.Map;
import org.osgi.service.component.annotations.Component;

/**
 * {@code nhit}: Open CAS Framework's n-hit promotion policy over LRU eviction. While fewer than
 * {@code trigger}% of the slots hold blocks, every miss is promoted (an empty cache fills at
 * once); after that a block is promoted on its {@code threshold}-th miss, counted in a bounded
 * {@link MissTable} of the recently missed blocks ({@code table} % of the slots), and forgotten
 * there once promoted. Blocks read once never displace cached ones, so a scan passes by.
 */
@Component(service = ReadCachePolicy.class, property = ReadCachePolicy.NAME + "=" + NHitPolicy.NAME)
public class NHitPolicy implements ReadCachePolicy {
    static final String NAME = "nhit";
    static final int DEFAULT_THRESHOLD = 3;
    static final int DEFAULT_TRIGGER = 80;
    static final int DEFAULT_TABLE = 100;

    @Override
    public String usage() {
        return "nhit [threshold=3 (1-100)] [trigger=80 (0-100 %)] [table=100 (1-1000 % of slots)] — promote a block on"
                + " its threshold-th miss once the cache is trigger % full, evict the least recently used";
    }

    @Override
    public Instance open(Contents contents, Map<String, String> tunables) {
        int threshold = Tunables.intValue(NAME, tunables, "threshold", DEFAULT_THRESHOLD, 1, 100);
        int trigger = Tunables.intValue(NAME, tunables, "trigger", DEFAULT_TRIGGER, 0, 100);
        int table = Tunables.intValue(NAME, tunables, "table", DEFAULT_TABLE, 1, 1000);
        return new NHit(contents, threshold, trigger, table);
    }

    static final class NHit implements Instance {
        private static final int FREE = 0;
        private static final int USED = 1;
        private final LinkedSlots lists;
        private final MissTable misses;
        private final int tablePercent;
        private int threshold;
        private int trigger;
        private long promotions;
        private long rejections;
        private long evictions;

        NHit(Contents contents, int threshold, int trigger, int tablePercent) {
            int slots = contents.slots();
            this.threshold = threshold;
            this.trigger = trigger;
            this.tablePercent = tablePercent;
            lists = new LinkedSlots(slots, 2);
            misses = new MissTable((int) Math.max(64, Math.min(Integer.MAX_VALUE - 8, (long) slots * tablePercent / 100)));
            for (int s = 0; s < slots; s++) {
                lists.addLast(contents.keyAt(s) == Contents.EMPTY ? FREE : USED, s);
            }
        }

        @Override
        public int onMiss(long key) {
            int slots = lists.slots();
            long occupied = slots - lists.size(FREE);
            boolean filling = occupied * 100 < (long) trigger * slots;
            if (!filling && misses.increment(key) < threshold) {
                rejections++;
                return REJECT;
            }
            int s = lists.pollFirst(FREE);
            if (s == LinkedSlots.NONE) {
                s = lists.pollFirst(USED);
                if (s == LinkedSlots.NONE) {
                    rejections++;
                    return REJECT; // every slot is pending
                }
                evictions++;
            }
            if (!filling) {
                misses.remove(key);
            }
            promotions++;
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
        public boolean set(String key, String value) {
            switch (key) {
                case "threshold" -> threshold = Tunables.parse(NAME, key, value, 1, 100);
                case "trigger" -> trigger = Tunables.parse(NAME, key, value, 0, 100);
                default -> {
                    return false;
                }
            }
            return true;
        }

        @Override
        public Map<String, String> status() {
            Map<String, String> m = new LinkedHashMap<>();
            m.put("policy", NAME);
            m.put("threshold", Integer.toString(threshold));
            m.put("trigger", Integer.toString(trigger));
            m.put("table", Integer.toString(tablePercent));
            m.put("table_entries", Integer.toString(misses.capacity()));
            m.put("cached", Integer.toString(lists.size(USED)));
            m.put("free", Integer.toString(lists.size(FREE)));
            m.put("promotions", Long.toString(promotions));
            m.put("rejections", Long.toString(rejections));
            m.put("evictions", Long.toString(evictions));
            return m;
        }

        @Override
        public long heapBytes() {
            return lists.heapBytes() + misses.heapBytes() + 64;
        }
    }
}
