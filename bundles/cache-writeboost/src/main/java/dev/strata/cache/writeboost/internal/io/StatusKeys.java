package dev.strata.cache.writeboost.internal.io;

import dev.strata.api.CacheTarget;
import dev.strata.cache.writeboost.internal.format.Layout;
import java.util.LinkedHashMap;
import java.util.Map;

/** The status keys of a writeboost cache, rendered in one place (read under the log's lock once). */
final class StatusKeys {
    static final int BS = Layout.BLOCK;

    private StatusKeys() {
    }

    static Map<String, String> render(Parts parts, String modeLabel) {
        LogState log = parts.log;
        Stats stats = parts.stats;
        Map<String, String> m = new LinkedHashMap<>();
        long lwbS;
        long head;
        long d;
        int cached;
        long used;
        String state;
        log.lock.lock();
        try {
            lwbS = log.lwb;
            head = log.headSid;
            d = log.dirty;
            cached = log.map.size();
            used = Math.max(0, Math.min(log.nSeg, head - log.reclaimSid));
            state = log.failure != null ? "failed" : log.closed ? "closed" : log.suspended ? "suspended" : "active";
        } finally {
            log.lock.unlock();
        }
        m.put("cache_state", state);
        m.put(CacheTarget.Keys.MODE, modeLabel);
        m.put(CacheTarget.Keys.BLOCK_SIZE, Integer.toString(BS));
        stats.readCounters.render(m);
        m.put("read_cache_staged", Long.toString(log.readCache.staged.sum()));
        m.put("read_cache_injected", Long.toString(log.readCache.injected.sum()));
        m.put("read_cache_cancelled", Long.toString(log.readCache.cancelled.sum()));
        m.put("read_cache_dropped", Long.toString(log.readCache.dropped.sum()));
        m.put("read_cache_sequential", Long.toString(log.readCache.sequential.sum()));
        stats.writeCounters.render(m);
        m.put("dirty_blocks", Long.toString(d));
        m.put("cached_blocks", Integer.toString(cached));
        m.put("capacity_blocks", Long.toString((long) log.nSeg * Layout.MAX_DATA));
        m.put("segments_used", Long.toString(used));
        m.put("segments_total", Integer.toString(log.nSeg));
        m.put("head_segment", Long.toString(head));
        m.put("written_back_segment", Long.toString(lwbS));
        stats.writebackCounters.render(m);
        m.put(CacheTarget.Keys.WRITEBACK_RATE, Long.toString(stats.writebackRate.perSecond()));
        m.put("writeback_error", stats.lastWritebackError);
        stats.logCounters.render(m);
        stats.readLatency.render(m);
        stats.writeLatency.render(m);
        stats.flushLatency.render(m);
        m.putAll(log.tunables().asMap());
        m.putAll(parts.writeback.controller.status(log.tunables().controller()));
        if (log.failure != null) {
            m.put("error", log.failure.getMessage());
        }
        return m;
    }
}
