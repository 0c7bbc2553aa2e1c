package dev.strata.cache.writeboost.internal.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.InvalidArgumentException;
import dev.strata.api.WritebackController;
import dev.strata.cache.writeboost.internal.testing.MemDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A writeboost cache's {@code writeback.<key>} settings reach its bound controller: set on the
 * open session (its decision changes), refused in one line by the controller, shown in status
 * (so the device manager persists them) and passed to the session of a controller that came back.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ControllerSettingsTest {
    /** Grants {@code grant} blocks (a setting, 0 to 100, default 0: wait) at every decision. */
    static final class Granting implements WritebackController {
        final List<Map<String, String>> opened = new ArrayList<>();

        static int parse(String v) {
            int n = v.matches("[0-9]{1,3}") ? Integer.parseInt(v) : -1;
            if (n < 0 || n > 100) {
                throw new InvalidArgumentException("granting: grant=" + v + " is out of range; allowed 0 to 100");
            }
            return n;
        }

        @Override
        public Session open(String cache, Map<String, String> tunables) {
            opened.add(Map.copyOf(tunables));
            int first = parse(tunables.getOrDefault("grant", "0"));
            return new Session() {
                int grant = first;

                @Override
                public Decision decide(CacheLoad load) {
                    return grant > 0 ? new Decision(grant, 0, grant) : Decision.waitFor(1_000_000_000L);
                }

                @Override
                public boolean set(String key, String value) {
                    if (!key.equals("grant")) {
                        return false;
                    }
                    grant = parse(value);
                    return true;
                }

                @Override
                public Map<String, String> status() {
                    return Map.of("grant", Integer.toString(grant));
                }
            };
        }
    }

    final MemDevice backing = new MemDevice("backing", 64L << 20);
    final MemDevice cacheDev = new MemDevice("cache", 17L << 20);
    final Map<String, WritebackController> registry = new ConcurrentHashMap<>();
    WriteboostCache wb;

    @AfterEach
    void close() throws IOException {
        if (wb != null) {
            wb.close();
        }
    }

    void writeSegments(int blocks, int seed) throws IOException {
        for (int i = 0; i < blocks; i++) {
            ByteBuffer b = ByteBuffer.allocate(4096);
            b.putLong(0, seed * 100_000L + i);
            wb.write((long) (seed * 1000 + i) * 4096, b, 0);
        }
        wb.flush();
    }

    @Test
    void aSettingReachesTheSessionChangesItsDecisionIsCheckedAndSurvivesARebind() throws IOException {
        Granting g = new Granting();
        registry.put("granting", g);
        Tunables t = Tunables.DEFAULTS.with(Tunables.BYPASS_THRESHOLD, "0").with(Tunables.SEQUENTIAL_CUTOFF, "0")
                .with(Tunables.CONTROLLER, "granting");
        wb = WriteboostCache.open("wb", backing, cacheDev, true, t, WriteboostCache.Options.defaults().manual().withBuffers(2),
                registry::get);
        writeSegments(600, 1); // two complete segments and more
        assertFalse(wb.writebackRunOnce(), "grant=0 by default: the controller says wait");
        assertEquals("granting", wb.status().get("writeback.controller.active"));

        wb.message("writeback.grant", "1");
        assertEquals("1", wb.status().get("writeback.grant"), "a setting the device manager persists and --all shows");
        assertTrue(wb.writebackRunOnce(), "grant=1 reached the open session: it grants, a segment is written back");
        assertEquals("1", wb.status().get("writeback.controller.grant"));

        InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                () -> wb.message("writeback.grant", "101"));
        assertEquals("writeboost: writeback.grant=101 refused by controller granting, nothing changed: "
                + "granting: grant=101 is out of range; allowed 0 to 100", e.getMessage());
        assertEquals("1", wb.status().get("writeback.grant"));
        assertTrue(assertThrows(InvalidArgumentException.class, () -> wb.message("writeback.writeback_threshold", "5"))
                .getMessage().contains("use cache:set DEV writeback_threshold=5"));

        wb.message("writeback.grant", "0");
        assertFalse(wb.writebackRunOnce(), "set back to 0: waits again");

        wb.message("writeback.grant", "2");
        registry.remove("granting"); // the daemons bundle goes away and comes back updated
        Granting updated = new Granting();
        registry.put("granting", updated);
        writeSegments(600, 2);
        assertTrue(wb.writebackRunOnce(), "the new session grants: it opened with the cache's grant=2, not its default 0");
        assertEquals("2", updated.opened.get(0).get("grant"));
        assertEquals("70", updated.opened.get(0).get("writeback_threshold"));
        assertEquals("2", wb.status().get("writeback.controller.grant"));
    }
}
