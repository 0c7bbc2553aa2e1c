package dev.strata.cache.support.writeback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.WritebackController;
import dev.strata.api.WritebackController.CacheLoad;
import dev.strata.api.WritebackController.Decision;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

class ControllerBindingTest {
    /** A controller that always allows 7 blocks and counts its sessions. */
    static final class Seven implements WritebackController {
        final List<Map<String, String>> opened = new ArrayList<>();
        int open;
        final List<String> sets = new ArrayList<>();
        final List<Long> wrote = new ArrayList<>();
        boolean explode;

        @Override
        public Session open(String cache, Map<String, String> tunables) {
            opened.add(tunables);
            open++;
            return new Session() {
                @Override
                public Decision decide(CacheLoad load) {
                    if (explode) {
                        throw new IllegalStateException("broken");
                    }
                    return new Decision(7, 0, 123);
                }

                @Override
                public boolean set(String key, String value) {
                    sets.add(key + "=" + value);
                    return true;
                }

                @Override
                public Map<String, String> status() {
                    return Map.of("rate", "123");
                }

                @Override
                public void wroteBack(long blocks, long nanoTime) {
                    wrote.add(blocks);
                }

                @Override
                public void close() {
                    open--;
                }
            };
        }
    }

    static CacheLoad load(int busy) {
        return new CacheLoad(0, 100, 1000, 4096, busy, 0, 0, 0, 500);
    }

    final Map<String, WritebackController> registry = new ConcurrentHashMap<>();
    final Map<String, String> tunables = Map.of("writeback_threshold", "70");

    @Test
    void bindsByNameFallsBackWhenItGoesAwayAndTakesItBack() {
        ControllerBinding b = ControllerBinding.withModulator("wb", registry::get);
        // nothing registered: the modulator decides (idle device: a full batch)
        assertEquals(500, b.decide("seven", tunables, load(0)).blocks());
        assertEquals("builtin", b.active());
        assertTrue(b.usingFallback());
        assertEquals("true", b.status().get(ControllerBinding.FALLBACK));
        assertEquals("70", b.status().get("writeback.controller.writeback_threshold"));

        Seven seven = new Seven();
        registry.put("seven", seven);
        assertEquals(7, b.decide("seven", tunables, load(0)).blocks());
        assertEquals("seven", b.active());
        assertFalse(b.usingFallback());
        assertEquals(1, seven.open, "one session on the bound controller");
        assertEquals(tunables, seven.opened.get(0));
        Map<String, String> st = b.status();
        assertEquals("seven", st.get(ControllerBinding.ACTIVE));
        assertEquals("false", st.get(ControllerBinding.FALLBACK));
        assertEquals("123", st.get("writeback.controller.rate"));
        for (int i = 0; i < 5; i++) {
            b.decide("seven", tunables, load(0));
        }
        assertEquals(1, seven.opened.size(), "the session is kept between decisions");

        registry.remove("seven"); // its bundle is being updated
        assertEquals(0, b.decide("seven", tunables, load(90)).blocks(), "the modulator: device too busy");
        assertEquals("builtin", b.active());
        assertEquals(0, seven.open, "the old session was closed");

        Seven updated = new Seven();
        registry.put("seven", updated);
        assertEquals(7, b.decide("seven", tunables, load(90)).blocks());
        assertEquals("seven", b.active());
        assertEquals(1, updated.open);
        assertEquals(1, seven.opened.size(), "the old service is not asked again");
        b.close();
        assertEquals(0, updated.open);
    }

    @Test
    void beforeTheFirstDecisionTheStatusNamesTheControllerThatBinds() {
        // a cache given writeback.controller=seven read "builtin, fallback=true" until it first
        // wrote back, as if seven were not installed
        ControllerBinding b = ControllerBinding.withModulator("wb", registry::get);
        assertEquals("builtin", b.status("seven").get(ControllerBinding.ACTIVE), "not installed yet");
        assertEquals("true", b.status("seven").get(ControllerBinding.FALLBACK));
        assertEquals("builtin", b.status("builtin").get(ControllerBinding.ACTIVE));
        assertEquals("false", b.status("builtin").get(ControllerBinding.FALLBACK), "asked for");
        Seven seven = new Seven();
        registry.put("seven", seven);
        assertEquals("seven", b.status("seven").get(ControllerBinding.ACTIVE));
        assertEquals("false", b.status("seven").get(ControllerBinding.FALLBACK));
        assertEquals(0, seven.open, "the status opens no session");
        b.decide("seven", tunables, load(0));
        assertEquals("seven", b.status("seven").get(ControllerBinding.ACTIVE));
        registry.remove("seven");
        b.decide("seven", tunables, load(0));
        assertEquals("builtin", b.status("seven").get(ControllerBinding.ACTIVE), "after a decision: what decided");
        assertEquals("true", b.status("seven").get(ControllerBinding.FALLBACK));
        b.close();
    }

    @Test
    void changedTunablesReachTheOpenSession() {
        Seven seven = new Seven();
        registry.put("seven", seven);
        ControllerBinding b = ControllerBinding.withModulator("wb", registry::get);
        b.decide("seven", tunables, load(0));
        b.decide("seven", Map.of("writeback_threshold", "20"), load(0));
        b.decide("seven", Map.of("writeback_threshold", "20"), load(0));
        assertEquals(List.of("writeback_threshold=20"), seven.sets);
        assertEquals(1, seven.opened.size());
    }

    @Test
    void aFailingControllerIsOverruledByTheFallback() {
        Seven seven = new Seven();
        seven.explode = true;
        registry.put("seven", seven);
        ControllerBinding b = ControllerBinding.withModulator("wb", registry::get);
        Decision d = b.decide("seven", tunables, load(0));
        assertEquals(500, d.blocks(), "the modulator decided");
        assertTrue(b.status().get("writeback.controller.error").contains("broken"));
        assertEquals("seven", b.active(), "still bound: it may recover");
    }

    @Test
    void anotherNameIsAnotherController() {
        Seven a = new Seven();
        Seven c = new Seven();
        registry.put("a", a);
        registry.put("c", c);
        ControllerBinding b = ControllerBinding.withModulator("wb", registry::get);
        b.decide("a", tunables, load(0));
        b.decide("c", tunables, load(0));
        assertEquals(0, a.open);
        assertEquals(1, c.open);
        assertEquals("c", b.active());
    }

    @Test
    void theBuiltInIsNamedBuiltinAndIsNoFallbackWhenAskedFor() {
        registry.put("modulator", new Seven()); // the daemons bundle's modulator: another controller
        ControllerBinding b = ControllerBinding.withModulator("wb", registry::get);
        assertEquals(7, b.decide("modulator", tunables, load(0)).blocks());
        assertEquals("modulator", b.active());
        assertFalse(b.usingFallback());
        registry.remove("modulator");
        b.decide("modulator", tunables, load(0));
        assertEquals("builtin", b.status().get(ControllerBinding.ACTIVE), "the fallback never shows the service's name");
        assertEquals("true", b.status().get(ControllerBinding.FALLBACK));
        b.decide("builtin", tunables, load(0));
        assertEquals("builtin", b.active());
        assertEquals("false", b.status().get(ControllerBinding.FALLBACK), "asked for: not standing in for anything");
    }

    @Test
    void whatWasWrittenBackReachesTheSessionThatGrantedItOnce() {
        Seven seven = new Seven();
        registry.put("seven", seven);
        ControllerBinding b = ControllerBinding.withModulator("wb", registry::get);
        b.decide("seven", tunables, load(0));
        b.wroteBack(255, 1);
        b.wroteBack(255, 2);
        assertEquals(List.of(255L), seven.wrote, "once per decision");
        b.decide("seven", tunables, load(0));
        registry.remove("seven");
        b.decide("seven", tunables, load(0)); // the builtin decides now
        b.wroteBack(100, 3);
        assertEquals(List.of(255L), seven.wrote, "not to a session that did not grant it");
    }
}
