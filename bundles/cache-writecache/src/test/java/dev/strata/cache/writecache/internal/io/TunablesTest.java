package dev.strata.cache.writecache.internal.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.InvalidArgumentException;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The writecache's tunables on cache-support's TunableTable: defaults, help, one-line refusals, the cross-key check. */
class TunablesTest {
    @Test
    void defaultsAndHelpComeFromTheTable() {
        Tunables d = Tunables.DEFAULTS;
        assertEquals(50, d.highWatermark());
        assertEquals(45, d.lowWatermark());
        assertEquals(256, d.writebackBatch());
        assertEquals(64, d.autocommitBlocks());
        assertEquals(1000, d.autocommitTime());
        assertEquals(0, d.maxAge());
        assertFalse(d.cleaner());
        assertEquals(3000, d.pauseWriteback());
        assertEquals("modulator", d.controller());
        assertEquals(70, d.writebackThreshold());
        assertEquals(Tunables.KEYS, d.asMap().keySet());
        String[] help = Tunables.help().split("\n");
        assertEquals(Tunables.KEYS.size(), help.length);
        for (String k : Tunables.KEYS) {
            assertTrue(Tunables.help().contains(k + "="), k);
        }
        assertTrue(Tunables.help().contains("high_watermark=50 (0 to 100): "));
    }

    @Test
    void bothWatermarksInOneChangeAreCheckedTogether() {
        // high below the current low, low lowered in the same change: valid as a whole, whatever the map's order
        Map<String, String> a = new LinkedHashMap<>();
        a.put(Tunables.HIGH_WATERMARK, "30");
        a.put(Tunables.LOW_WATERMARK, "20");
        Tunables t = Tunables.DEFAULTS.withAll(a);
        assertEquals(30, t.highWatermark());
        assertEquals(20, t.lowWatermark());
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                () -> Tunables.DEFAULTS.with(Tunables.HIGH_WATERMARK, "30"));
        assertEquals("writecache: low_watermark=45 is above high_watermark=30; the low watermark must not exceed the high one",
                e.getMessage());
    }

    @Test
    void badValuesAreOneLineAndChangeNothing() {
        for (String[] kv : new String[][] {{Tunables.WRITEBACK_BATCH, "0"}, {Tunables.AUTOCOMMIT_TIME, "-1"},
                {Tunables.CLEANER, "maybe"}, {Tunables.CONTROLLER, "a b"}, {"no_such_key", "1"}}) {
            InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                    () -> Tunables.DEFAULTS.with(kv[0], kv[1]));
            assertTrue(e.getMessage().startsWith("writecache: "), e.getMessage());
            assertFalse(e.getMessage().contains("\n"), e.getMessage());
        }
        assertEquals(Tunables.DEFAULTS, Tunables.DEFAULTS.with(Tunables.WRITEBACK_BATCH, "256"));
        assertEquals("pi", Tunables.DEFAULTS.with(Tunables.CONTROLLER, "PI").controller());
    }
}
