package dev.strata.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.strata.api.DeviceState;

/** Tunables set with dev:message survive restart and reload; transient devices are never stored. */
class TunablesTest extends ManagerFixture {

    private Map<String, String> storedTunables(String name) {
        return store.snapshot().values().stream().filter(d -> d.name().equals(name)).findFirst().orElseThrow()
                .tunables();
    }

    @Test
    void aTunableSurvivesARestart() throws Exception {
        cacheStack();
        m.message("wb0", "threshold", "50");
        assertEquals(Map.of("threshold", "50"), storedTunables("wb0"));
        restart();
        assertEquals("50", m.status("wb0").get("threshold"));
    }

    /**
     * A persisted tunable the factory takes as an argument is passed at build, not by a message
     * after it: the target's background work starts inside create and must never run with the
     * default (a writeboost cache with writeback_threshold 0 persisted wrote back a batch at each
     * restart before the message arrived).
     */
    @Test
    void aTunableTheFactoryTakesIsInForceFromTheBuild() throws Exception {
        cacheStack();
        m.message("wb0", "threshold", "0", true);
        restart();
        assertEquals(List.of("0"), caches.builtWithThreshold);
        assertEquals(List.of(), caches.messages);
        assertEquals("0", m.status("wb0").get("threshold"));
        m.reload("wb0", "tcache", args("backing", "disk0", "cache", "cache0"));
        assertEquals(List.of("0", "0"), caches.builtWithThreshold);
        assertEquals(List.of(), caches.messages);
        // the persisted value is newer than the table's argument of the same key
        assertEquals(Map.of("threshold", "0"), storedTunables("wb0"));
    }

    @Test
    void aTunableTheFactoryDoesNotTakeIsReappliedAfterTheBuild() throws Exception {
        cacheStack();
        m.message("wb0", "label", "blue", true);
        m.message("wb0", "threshold", "5", true);
        restart();
        assertEquals(List.of("5"), caches.builtWithThreshold);
        assertEquals(List.of("label=blue"), caches.messages);
        assertEquals("blue", m.status("wb0").get("label"));
    }

    @Test
    void aTunableSurvivesAReloadUnlessTheReloadSetsIt() throws Exception {
        cacheStack();
        m.message("wb0", "threshold", "50", true);
        m.reload("wb0", "tcache", args("backing", "disk0", "cache", "cache0"));
        assertEquals("50", m.status("wb0").get("threshold"));
        m.reload("wb0", "tcache", args("backing", "disk0", "cache", "cache0", "threshold", "70"));
        assertEquals("70", m.status("wb0").get("threshold"));
        assertEquals(Map.of(), storedTunables("wb0"));
        restart();
        assertEquals("70", m.status("wb0").get("threshold"));
    }

    @Test
    void aOneOffIsNotKept() throws Exception {
        cacheStack();
        m.message("wb0", "threshold", "50", false);
        assertEquals("50", m.status("wb0").get("threshold"));
        assertEquals(Map.of(), storedTunables("wb0"));
        restart();
        assertEquals("10", m.status("wb0").get("threshold"));
    }

    @Test
    void anActionIsNeverKept() throws Exception {
        cacheStack();
        assertEquals("writeback is an action, not a setting: done once, not kept",
                m.messageReporting("wb0", "writeback", "all", true));
        assertEquals(Map.of(), storedTunables("wb0"));
        // the API's form (cache:set's), with the target's own note
        dev.strata.api.DeviceManager api = m;
        assertEquals("takes effect later", api.messageWithNote("wb0", "label", "later", true));
        assertEquals("later", storedTunables("wb0").get("label"));
    }

    @Test
    void aBadValueChangesNothing() throws Exception {
        cacheStack();
        refused(() -> m.message("wb0", "threshold", "lots"), "threshold=lots is not a number");
        assertEquals(Map.of(), storedTunables("wb0"));
    }

    @Test
    void aTransientDeviceIsNeverStored() throws Exception {
        disk("disk0");
        m.createTransient("scratch", "linear", args("device", "disk0"));
        assertFalse(m.info("scratch").orElseThrow().persistent());
        assertTrue(m.info("disk0").orElseThrow().persistent());
        assertFalse(store.snapshot().values().stream().anyMatch(d -> d.name().equals("scratch")));
        m.reload("scratch", "linear", args("device", "disk0", "length", "512K"));
        assertFalse(store.snapshot().values().stream().anyMatch(d -> d.name().equals("scratch")));
        restart();
        assertTrue(m.info("scratch").isEmpty());
        assertEquals(DeviceState.ACTIVE, m.info("disk0").orElseThrow().state());
    }

    @Test
    void aTransientDevicesTunablesLiveAsLongAsIt() throws Exception {
        disk("disk0");
        disk("cache0");
        m.createTransient("wb0", "tcache", args("backing", "disk0", "cache", "cache0"));
        m.message("wb0", "threshold", "40");
        m.reload("wb0", "tcache", args("backing", "disk0", "cache", "cache0"));
        assertEquals("40", m.status("wb0").get("threshold"));
        m.remove("wb0");
        assertNull(m.info("wb0").orElse(null));
    }
}
