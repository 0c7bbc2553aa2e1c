package dev.strata.cache.commands.internal;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.strata.api.CacheTarget.Keys;

/**
 * Sorts status keys into the groups {@code cache:stats --all} shows. By the shape of a key's name
 * only (every policy names its counters its own way), with the {@link Keys} spellings placed
 * exactly; a key no rule knows lands in {@link Group#OTHER}, so nothing a target reports is ever
 * hidden.
 */
final class StatusGroups {

    /** The groups, in the order they are shown. */
    enum Group {
        STATE("state"), CAPACITY("capacity"), HITS("hits"), WRITEBACK("writeback"), LATENCY("latency"), OTHER("other");

        final String title;

        Group(String title) {
            this.title = title;
        }
    }

    /** The device's own keys (the manager's), and the cache API's state keys. */
    private static final Set<String> STATE = Set.of("state", "type", "size", "block_size", "in_flight", "waiting",
            "waiting_for", "last_error", "error", Keys.MODE);
    private static final Set<String> CAPACITY = Set.of(Keys.CAPACITY_BLOCKS, Keys.CACHED_BLOCKS, Keys.DIRTY_BLOCKS,
            Keys.BLOCK_SIZE);

    private StatusGroups() {
    }

    static Group of(String key) {
        String k = key.toLowerCase(java.util.Locale.ROOT);
        if (k.contains("latency")) {
            return Group.LATENCY;
        }
        if (STATE.contains(k) || k.endsWith("_state")) {
            return Group.STATE;
        }
        if (CAPACITY.contains(k) || k.contains("capacity") || k.endsWith("_used") || k.endsWith("_total")
                || k.endsWith("_free")) {
            return Group.CAPACITY;
        }
        if (k.equals(Keys.CONTROLLER) || k.contains("writeback") || k.contains("written_back")) {
            return Group.WRITEBACK;
        }
        if (k.contains("hit") || k.contains("miss") || k.contains("bypass") || k.startsWith("read_cache")
                || k.startsWith("writes_")) {
            return Group.HITS;
        }
        return Group.OTHER;
    }

    /** The entries with a non-empty value, grouped, each group in the order the target gave. */
    static Map<Group, List<Map.Entry<String, String>>> group(Map<String, String> values) {
        Map<Group, List<Map.Entry<String, String>>> m = new EnumMap<>(Group.class);
        for (Map.Entry<String, String> e : values.entrySet()) {
            if (e.getValue() == null || e.getValue().isBlank()) {
                continue; // an empty value (no error so far, no controller) says nothing
            }
            m.computeIfAbsent(of(e.getKey()), g -> new ArrayList<>()).add(Map.entry(e.getKey(), e.getValue().trim()));
        }
        return m;
    }
}
