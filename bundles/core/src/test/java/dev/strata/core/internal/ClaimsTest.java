package dev.strata.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.strata.api.Claim;
import dev.strata.api.DeviceHandle;
import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceState;

/** Claims: a device held exclusively is held by one device only, and not exported directly. */
class ClaimsTest extends ManagerFixture {

    @Test
    void nothingMayStackOnACacheDevice() throws Exception {
        cacheStack();
        assertEquals("cache0 is held exclusively by wb0 (tcache cache device); use another device, or remove wb0 first",
                refused(() -> m.create("peek", "linear", args("device", "cache0")), "held exclusively"));
        disk("disk1");
        refused(() -> m.create("wb1", "tcache", args("backing", "disk1", "cache", "cache0")),
                "cache0 is held exclusively by wb0 (tcache cache device)");
        refused(() -> m.create("wb2", "tcache", args("backing", "disk0", "cache", "disk1")),
                "disk0 is held exclusively by wb0 (tcache backing device)");
    }

    @Test
    void aReloadCannotTakeAnotherDevicesExclusiveClaim() throws Exception {
        cacheStack();
        disk("disk1");
        m.create("part", "linear", args("device", "disk1"));
        refused(() -> m.reload("part", "linear", args("device", "cache0")), "cache0 is held exclusively by wb0");
        // the holder itself may reload over the same devices
        m.reload("wb0", "tcache", args("backing", "disk0", "cache", "cache0"));
        assertEquals(DeviceState.ACTIVE, m.info("wb0").orElseThrow().state());
    }

    @Test
    void anExclusiveClaimNeedsTheDeviceAlone() throws Exception {
        disk("disk0");
        disk("cache0");
        m.create("part", "linear", args("device", "disk0"));
        assertEquals("disk0 is in use by part (linear device, shared); wb0 needs it exclusively: remove part first",
                refused(() -> m.create("wb0", "tcache", args("backing", "disk0", "cache", "cache0")), "in use by part"));
        try (DeviceHandle h = m.open("cache0", "nbd:cache0")) {
            refused(() -> m.create("wb0", "tcache", args("backing", "disk1x", "cache", "cache0")), "no device named 'disk1x'");
            disk("disk1");
            refused(() -> m.create("wb0", "tcache", args("backing", "disk1", "cache", "cache0")),
                    "cache0 is in use by nbd:cache0; wb0 needs it exclusively");
        }
        m.create("wb0", "tcache", args("backing", "disk1", "cache", "cache0"));
    }

    @Test
    void anExclusivelyHeldDeviceCannotBeExported() throws Exception {
        cacheStack();
        refused(() -> m.open("cache0", "nbd:cache0"), "cache0 is held exclusively by wb0 (tcache cache device)");
        m.open("wb0", "nbd:wb0").close();
    }

    @Test
    void holdersAreListedWithTheirClaim() throws Exception {
        cacheStack();
        m.create("part", "linear", args("device", "wb0"));
        try (DeviceHandle h = m.open("part", "nbd:part")) {
            assertEquals(Map.of("wb0", Claim.EXCLUSIVE), m.info("cache0").orElseThrow().holderClaims());
            assertEquals(Map.of("wb0", Claim.EXCLUSIVE), m.info("disk0").orElseThrow().holderClaims());
            assertEquals(Map.of("part", Claim.SHARED), m.info("wb0").orElseThrow().holderClaims());
            assertEquals(Map.of("nbd:part", Claim.SHARED), m.info("part").orElseThrow().holderClaims());
        }
    }

    @Test
    void removingTheHolderReleasesItsClaims() throws Exception {
        cacheStack();
        m.remove("wb0");
        m.create("peek", "linear", args("device", "cache0"));
        assertEquals(List.of("peek"), m.info("cache0").orElseThrow().holders());
    }

    @Test
    void conflictingStoredDefinitionsBringUpOneAndTheOtherSaysWhy() throws Exception {
        disk("disk0");
        disk("disk1");
        disk("cache0");
        m.create("wb0", "tcache", args("backing", "disk0", "cache", "cache0"));
        // a definition from outside (a .cfg written by hand) that claims the same cache device
        String key = store.putExternal(new DeviceDefinition("wb1", "tcache", args("backing", "disk1", "cache", "cache0")));
        m.definitionChanged(key).get();
        assertTrue(m.awaitQuiet(30, java.util.concurrent.TimeUnit.SECONDS));
        DeviceInfo wb1 = m.info("wb1").orElseThrow();
        assertEquals(DeviceState.WAITING_FOR_TARGET, wb1.state());
        assertNotNull(wb1.waitingFor());
        assertTrue(wb1.waitingFor().contains("cache0 is held exclusively by wb0 (tcache cache device)"), wb1.waitingFor());
        assertNull(m.info("wb0").orElseThrow().waitingFor());
        assertEquals(Map.of("wb0", Claim.EXCLUSIVE), m.info("cache0").orElseThrow().holderClaims(),
                "a device waiting to claim it holds nothing yet");
        // after a restart the same: the first built wins, the other waits and says why
        restart();
        assertTrue(m.awaitQuiet(30, java.util.concurrent.TimeUnit.SECONDS));
        List<DeviceInfo> up = m.list().stream().filter(d -> d.name().startsWith("wb") && d.state() == DeviceState.ACTIVE)
                .toList();
        assertEquals(1, up.size());
        // once the holder is removed, the other one comes up
        String other = up.get(0).name().equals("wb0") ? "wb1" : "wb0";
        m.remove(up.get(0).name());
        assertTrue(m.awaitQuiet(30, java.util.concurrent.TimeUnit.SECONDS));
        assertEquals(DeviceState.ACTIVE, m.info(other).orElseThrow().state());
    }
}
