package dev.strata.cache.support.writeback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.InvalidArgumentException;
import dev.strata.api.WritebackController;
import dev.strata.api.WritebackController.CacheLoad;
import dev.strata.api.WritebackController.Decision;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * The caches' {@code writeback.<key>} settings: checked by the controller, kept by the binding,
 * passed to every session it opens (also after a rebind) and to the open one by {@code set}.
 */
class ControllerSettingsTest {
    /** Grants {@code grant} blocks (default 7, allowed 0 to 100) at every decision. */
    static final class Granting implements WritebackController {
        final List<Map<String, String>> opened = new ArrayList<>();
        final List<String> sets = new ArrayList<>();

        static long parse(String v) {
            long n;
            try {
                n = Long.parseLong(v);
            } catch (NumberFormatException e) {
                n = -1;
            }
            if (n < 0 || n > 100) {
                throw new InvalidArgumentException("granting: grant=" + v + " is out of range; allowed 0 to 100");
            }
            return n;
        }

        @Override
        public Session open(String cache, Map<String, String> tunables) {
            long first = tunables.containsKey("grant") ? parse(tunables.get("grant")) : 7;
            opened.add(Map.copyOf(tunables));
            return new Session() {
                long grant = first;
                boolean decided; // the binding's probe of a new setting never decides: its sets are not recorded

                @Override
                public Decision decide(CacheLoad load) {
                    decided = true;
                    return new Decision((int) grant, 0, grant);
                }

                @Override
                public boolean set(String key, String value) {
                    if (decided) {
                        sets.add(key + "=" + value);
                    }
                    if (!key.equals("grant")) {
                        return false;
                    }
                    grant = parse(value);
                    return true;
                }

                @Override
                public Map<String, String> status() {
                    return Map.of("grant", Long.toString(grant));
                }
            };
        }
    }

    static CacheLoad load() {
        return new CacheLoad(0, 100, 1000, 4096, 0, 0, 0, 0, 500);
    }

    final Map<String, WritebackController> registry = new ConcurrentHashMap<>();
    final Map<String, String> own = Map.of("writeback_threshold", "70");
    final ControllerBinding b = ControllerBinding.withModulator("wb", registry::get);

    @Test
    void aSettingReachesTheOpenSessionAndChangesItsDecision() {
        Granting g = new Granting();
        registry.put("granting", g);
        assertEquals(7, b.decide("granting", own, load()).blocks());
        b.set("writeboost", "granting", own, "writeback.grant", "3");
        assertEquals(3, b.decide("granting", own, load()).blocks());
        assertEquals(List.of("grant=3"), g.sets, "passed to the open session once, without the prefix");
        assertEquals(1, b.sessionsOpened());
        Map<String, String> st = b.status();
        assertEquals("3", st.get("writeback.grant"), "the setting is in status under its own key (persisted, --all)");
        assertEquals("3", st.get("writeback.controller.grant"), "and the session shows it took it");
    }

    @Test
    void theSettingsSurviveARebindAndReachEveryNewSession() {
        b.set("writecache", "granting", own, "writeback.grant", "4");
        // not installed: kept, the built-in paces (a full batch on an idle device) and ignores it
        assertEquals(500, b.decide("granting", own, load()).blocks());
        assertEquals("builtin", b.active());
        Granting g = new Granting();
        registry.put("granting", g);
        assertEquals(4, b.decide("granting", own, load()).blocks());
        assertEquals(Map.of("grant", "4", "writeback_threshold", "70"), g.opened.get(0));

        registry.remove("granting"); // the daemons bundle goes away …
        assertEquals(500, b.decide("granting", own, load()).blocks());
        Granting updated = new Granting(); // … and an updated one comes back
        registry.put("granting", updated);
        assertEquals(4, b.decide("granting", own, load()).blocks(), "the new session got the setting");
        assertEquals(Map.of("grant", "4", "writeback_threshold", "70"), updated.opened.get(0));
        assertEquals("4", b.status().get("writeback.grant"));
    }

    @Test
    void aBadValueIsRefusedInOneLineAndNothingChanges() {
        Granting g = new Granting();
        registry.put("granting", g);
        b.set("writeboost", "granting", own, "writeback.grant", "5");
        assertEquals(5, b.decide("granting", own, load()).blocks());
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                () -> b.set("writeboost", "granting", own, "writeback.grant", "101"));
        assertEquals("writeboost: writeback.grant=101 refused by controller granting, nothing changed: "
                + "granting: grant=101 is out of range; allowed 0 to 100", e.getMessage());
        assertFalse(e.getMessage().contains("\n"));
        assertEquals(Map.of("grant", "5"), b.settings());
        assertEquals(5, b.decide("granting", own, load()).blocks());
        assertEquals(List.of(), g.sets, "the open session never saw the refused value");
        assertFalse(b.status().containsKey("writeback.controller.error"));
    }

    @Test
    void malformedKeysTheCachesOwnKeysAndEmptyValuesAreRefused() {
        assertEquals("writecache: writeback.writeback_threshold is the cache's own tunable; "
                + "use cache:set DEV writeback_threshold=50",
                assertThrows(InvalidArgumentException.class,
                        () -> b.set("writecache", "pi", own, "writeback.writeback_threshold", "50")).getMessage());
        assertTrue(assertThrows(InvalidArgumentException.class,
                () -> b.set("writecache", "pi", own, "writeback.Bad-Key", "1")).getMessage()
                .startsWith("writecache: writeback.Bad-Key is not a controller setting"));
        assertTrue(assertThrows(InvalidArgumentException.class,
                () -> b.set("writecache", "pi", own, "writeback.rate_minimum", " ")).getMessage()
                .contains("needs a value"));
        assertEquals(Map.of(), b.settings());
        assertFalse(ControllerBinding.isSetting("writeback.controller"));
        assertFalse(ControllerBinding.isSetting("writeback.controller.active"));
        assertFalse(ControllerBinding.isSetting("writeback_threshold"));
        assertTrue(ControllerBinding.isSetting("writeback.p_term_inverse"));
    }

    /** A typo (a key the installed controller does not know) is refused, not kept and persisted doing nothing. */
    @Test
    void aKeyTheControllerDoesNotKnowIsRefused() {
        registry.put("granting", new Granting());
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                () -> b.set("writecache", "granting", own, "writeback.nosuch", "1"));
        assertEquals("writecache: writeback.nosuch is not a tunable of writeback controller granting, nothing changed;"
                + " its tunables are listed in docs/daemons.md (for another controller's, set writeback.controller to it"
                + " first)", e.getMessage());
        assertEquals(Map.of(), b.settings());
        assertFalse(b.status().containsKey("writeback.nosuch"), "not in status: the manager does not persist it");
        // the built-in has no tunable of its own but the cache's writeback_threshold
        assertThrows(InvalidArgumentException.class, () -> b.set("writecache", "builtin", own, "writeback.grant", "1"));
        assertEquals(Map.of(), b.settings());
    }

    @Test
    void aControllerThatIsNotInstalledChecksNothingYetAndRefusesAtBind() {
        b.set("writeboost", "granting", own, "writeback.grant", "500"); // nobody to ask: kept
        registry.put("granting", new Granting());
        assertEquals(500, b.decide("granting", own, load()).blocks(), "the controller refused to open: the built-in paces");
        assertEquals("builtin", b.active());
        assertTrue(b.status().get("writeback.controller.error").contains("grant=500 is out of range"));
        b.set("writeboost", "granting", own, "writeback.grant", "2"); // fixed: the next decision binds
        assertEquals(2, b.decide("granting", own, load()).blocks());
        assertEquals("granting", b.active());
    }
}
