package dev.strata.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.UUID;

import org.junit.jupiter.api.Test;

/**
 * {@code format=true} formats once: for the build that asked for it ({@code dev:create}, the first
 * start of a deployed definition), not at every later start. Kept, a start after the cache's
 * superblock got damaged formatted it silently, losing the dirty blocks {@code strata-tool repair}
 * would have kept.
 */
class FormatOnceTest extends ManagerFixture {

    private Map<String, String> storedArgs(String name) {
        return store.snapshot().values().stream().filter(d -> d.name().equals(name)).findFirst().orElseThrow()
                .arguments();
    }

    @Test
    void devCreateStoresItsDefinitionWithoutFormat() throws Exception {
        disk("disk0");
        disk("cache0");
        m.create("wb0", "tcache", args("backing", "disk0", "cache", "cache0", "format", "true"));
        assertEquals(Map.of("backing", "disk0", "cache", "cache0"), m.info("wb0").orElseThrow().arguments());
        assertEquals(Map.of("backing", "disk0", "cache", "cache0"), storedArgs("wb0"), "stored without it");
        restart();
        assertEquals(Map.of("backing", "disk0", "cache", "cache0"), m.info("wb0").orElseThrow().arguments());
        assertEquals("tcache", m.info("wb0").orElseThrow().type());
    }

    @Test
    void aDeployedDefinitionsFormatIsWrittenBackAfterItsFirstBuild() throws Exception {
        disk("disk0");
        disk("cache0");
        // as a deploy .cfg with arg.format=true arrives: in the store before the start
        store.save(new DeviceDefinition("wb0", "tcache", args("backing", "disk0", "cache", "cache0", "format", "true"),
                UUID.randomUUID().toString(), Map.of()));
        restart();
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (storedArgs("wb0").containsKey("format") && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertTrue(m.info("wb0").orElseThrow().lower().contains("cache0"), "built");
        assertEquals(Map.of("backing", "disk0", "cache", "cache0"), storedArgs("wb0"), "written back without it");
        assertEquals(Map.of("backing", "disk0", "cache", "cache0"), m.info("wb0").orElseThrow().arguments());
    }
}
