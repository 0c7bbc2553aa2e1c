package dev.strata.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.strata.api.InvalidArgumentException;

/**
 * WHY (dev:list, {@code DeviceInfo.waitingFor}) of a running device whose changed configuration was
 * refused: it says so until a later change stores the device's definition over the refused one —
 * the configuration fixed, a dev:reload — and no longer after it (it kept the old refusal). A
 * change that fails keeps it: the refused configuration is still what is stored.
 */
class RefusedDefinitionTest extends ManagerFixture {

    @Test
    void aLaterAppliedConfigurationClearsTheRefusal() throws Exception {
        String key = refusedChange();
        store.save(new DeviceDefinition("d1", "linear", args("device", "disk0", "length", "512K"),
                m.info("d1").orElseThrow().id(), java.util.Map.of()));
        m.definitionChanged(key).get(30, TimeUnit.SECONDS);
        assertEquals("512K", m.definition("d1").arguments().get("length"), "the fixed configuration is applied");
        assertNull(m.info("d1").orElseThrow().waitingFor(), "the refusal is out of date");
        assertTrue(!m.status("d1").containsKey("last_error"), String.valueOf(m.status("d1")));
    }

    @Test
    void aReloadClearsTheRefusal() throws Exception {
        refusedChange();
        m.reload("d1", "linear", args("device", "disk0", "length", "256K"));
        assertNull(m.info("d1").orElseThrow().waitingFor(), "the reload stored its definition over the refused one");
    }

    @Test
    void aFailedReloadKeepsTheRefusal() throws Exception {
        refusedChange();
        assertThrows(InvalidArgumentException.class, () -> m.reload("d1", "linear", args("device", "nodisk")));
        assertTrue(String.valueOf(m.info("d1").orElseThrow().waitingFor())
                .startsWith("the changed configuration could not be applied: "), m.info("d1").orElseThrow().waitingFor());
    }

    /** d1 (linear over disk0) runs; its stored configuration changes into one over a device that does not exist. */
    private String refusedChange() throws IOException, Exception {
        disk("disk0");
        m.create("d1", "linear", args("device", "disk0"));
        DeviceDefinition running = m.definition("d1");
        String key = store.save(new DeviceDefinition("d1", "linear", args("device", "ghost"), running.id(),
                java.util.Map.of())); // as a cm edit or a deploy/ file would change it
        m.definitionChanged(key).get(30, TimeUnit.SECONDS);
        String why = m.info("d1").orElseThrow().waitingFor();
        assertTrue(String.valueOf(why).startsWith("the changed configuration could not be applied: ")
                && why.contains("ghost"), why);
        assertEquals("disk0", m.definition("d1").arguments().get("device"), "the device keeps its definition");
        return key;
    }
}
