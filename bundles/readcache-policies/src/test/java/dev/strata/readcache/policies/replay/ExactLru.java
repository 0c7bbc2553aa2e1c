package dev.strata.readcache.policies.replay;

import java.util.LinkedHashMap;
import java.util.Map;

/** Reference LRU, exact and obviously right: an access-ordered {@link LinkedHashMap}. */
final class ExactLru implements Simulator {
    private final int capacity;
    private final LinkedHashMap<Long, Boolean> map;

    ExactLru(int capacity) {
        this.capacity = capacity;
        this.map = new LinkedHashMap<>(16, 0.75f, true) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<Long, Boolean> eldest) {
                return size() > ExactLru.this.capacity;
            }
        };
    }

    @Override
    public boolean access(long key) {
        if (map.get(key) != null) {
            return true;
        }
        map.put(key, Boolean.TRUE);
        return false;
    }
}
