package dev.strata.daemons.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.InvalidArgumentException;
import dev.strata.api.WritebackController;
import dev.strata.api.WritebackController.CacheLoad;
import dev.strata.cache.support.writeback.ControllerBinding;
import dev.strata.daemons.internal.idle.IdleController;
import dev.strata.daemons.internal.pi.PiController;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code pi}'s and {@code idle}'s tunables set the way a cache sets them: {@code cache:set DEV
 * writeback.<key>=<value>} goes to the cache's {@link ControllerBinding}, which checks it with the
 * controller and passes it on (docs/daemons.md, "Binding a controller to a cache").
 */
class CacheSettingsTest {
    static final long SEC = 1_000_000_000L;
    final Map<String, WritebackController> installed = Map.of("pi", new PiController(), "idle", new IdleController());
    final Map<String, String> own = Map.of("writeback_threshold", "70");
    final ControllerBinding b = ControllerBinding.withModulator("wb", installed::get);

    /** PiControlTest's cache: 1 000 000 sectors, 140 000 dirty (4 KiB blocks). */
    static CacheLoad piLoad(long nanos) {
        return new CacheLoad(nanos, 17_500, 125_000, 4096, 0, 0, 0, 0, 1000);
    }

    @Test
    void piTakesItsTermsFromTheCachesSettings() {
        b.decide("pi", own, piLoad(SEC));
        assertEquals("1000", b.status().get("writeback.controller.rate_sectors_per_sec"), "defaults: P = 40 000 / 40");
        b.set("writeboost", "pi", own, "writeback.p_term_inverse", "20");
        b.decide("pi", own, piLoad(6 * SEC));
        Map<String, String> st = b.status();
        assertEquals("20", st.get("writeback.controller.p_term_inverse"));
        assertEquals("20", st.get("writeback.p_term_inverse"));
        long rate = Long.parseLong(st.get("writeback.controller.rate_sectors_per_sec"));
        assertTrue(rate >= 2000, "P = 40 000 / 20 now, the rate follows: " + rate);

        b.set("writeboost", "pi", own, "writeback.writeback_percent", "14"); // target = dirty: no error
        b.decide("pi", own, piLoad(11 * SEC));
        assertEquals("0", b.status().get("writeback.controller.proportional"));
    }

    @Test
    void aBadValueNamesTheKeyAndRangeAndChangesNothing() {
        b.set("writecache", "pi", own, "writeback.writeback_percent", "20");
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                () -> b.set("writecache", "pi", own, "writeback.writeback_percent", "101"));
        assertTrue(e.getMessage().startsWith("writecache: writeback.writeback_percent=101 refused by controller pi, "
                + "nothing changed: pi: writeback_percent=101 is out of range; allowed 0 to 100"), e.getMessage());
        assertEquals(Map.of("writeback_percent", "20"), b.settings());
        b.set("writecache", "pi", own, "writeback.rate_maximum", "100");
        assertThrows(InvalidArgumentException.class,
                () -> b.set("writecache", "pi", own, "writeback.rate_minimum", "200"), "rate_minimum above rate_maximum");
        assertEquals(Map.of("writeback_percent", "20", "rate_maximum", "100"), b.settings());
    }

    @Test
    void idleRunsAtFullSpeedAfterTheCachesIdleMs() {
        CacheLoad quiet = new CacheLoad(SEC, 100, 1000, 4096, 0, 0, 0, 500, 256);
        assertTrue(b.decide("idle", own, quiet).blocks() < 256, "500 ms idle is busy by the default 3000 ms");
        b.set("writecache", "idle", own, "writeback.idle_ms", "400");
        assertEquals(256, b.decide("idle", own, new CacheLoad(2 * SEC, 100, 1000, 4096, 0, 0, 0, 500, 256)).blocks(),
                "idle_ms=400: 500 ms without requests is idle, a full batch");
        assertEquals("400", b.status().get("writeback.controller.idle_ms"));
    }
}
