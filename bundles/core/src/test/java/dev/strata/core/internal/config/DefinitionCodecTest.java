package dev.strata.core.internal.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Dictionary;
import java.util.Hashtable;
import java.util.LinkedHashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.strata.api.InvalidArgumentException;
import dev.strata.core.internal.DeviceDefinition;

class DefinitionCodecTest {

    @Test
    void roundTrip() {
        Map<String, String> args = new LinkedHashMap<>();
        args.put("path", "var/disk0.img");
        args.put("size", "1G");
        args.put("create", "true");
        DeviceDefinition def = new DeviceDefinition("disk0", "file", args);
        Dictionary<String, Object> props = DefinitionCodec.encode(def);
        assertEquals("disk0", props.get("name"));
        assertEquals("file", props.get("type"));
        assertEquals("var/disk0.img", props.get("arg.path"));
        assertEquals("1G", props.get("arg.size"));
        assertEquals(5, props.size());
        assertEquals(def, DefinitionCodec.decode("dev.strata.device~disk0", props));
    }

    /** An attach's uncommitted lower half keeps its mark through the store; an unmarked save drops it. */
    @Test
    void stagedMarkRoundTripsAndAnUnmarkedSaveRemovesIt() {
        DeviceDefinition def = new DeviceDefinition("disk0.file", "file", Map.of("path", "var/disk0.img"), "id-1",
                Map.of()).staged("disk0");
        Dictionary<String, Object> props = DefinitionCodec.encode(def);
        assertEquals("disk0", props.get("staged.for"));
        DeviceDefinition back = DefinitionCodec.decode("dev.strata.device~disk0.file", props);
        assertEquals(def, back);
        assertEquals("disk0", back.stagedFor());
        Hashtable<String, Object> current = new Hashtable<>();
        for (String k : java.util.Collections.list(props.keys())) {
            current.put(k, props.get(k));
        }
        Dictionary<String, Object> merged = DefinitionCodec.merge(current, def.staged(null));
        assertEquals(null, merged.get("staged.for"));
        assertEquals(null, DefinitionCodec.decode("dev.strata.device~disk0.file", merged).stagedFor());
    }

    @Test
    void lowerOfMarkRoundTripsAndSurvivesTheStagedMarkBeingDropped() {
        DeviceDefinition def = new DeviceDefinition("disk0.file", "file", Map.of("path", "var/disk0.img"), "id-1",
                Map.of()).lowerOf("disk0").staged("disk0");
        Dictionary<String, Object> props = DefinitionCodec.encode(def);
        assertEquals("disk0", props.get("lower.of"));
        assertEquals(def, DefinitionCodec.decode("dev.strata.device~disk0.file", props));
        Hashtable<String, Object> current = new Hashtable<>();
        for (String k : java.util.Collections.list(props.keys())) {
            current.put(k, props.get(k));
        }
        DeviceDefinition committed = DefinitionCodec.decode("x", DefinitionCodec.merge(current, def.staged(null)));
        assertEquals(null, committed.stagedFor());
        assertEquals("disk0", committed.lowerOf());
        Dictionary<String, Object> unmarked = DefinitionCodec.merge(current, def.lowerOf(null).staged(null));
        assertEquals(null, unmarked.get("lower.of"));
    }

    @Test
    void ignoresFrameworkPropertiesAndReadsNonStrings() {
        Hashtable<String, Object> props = new Hashtable<>();
        props.put("service.pid", "dev.strata.device.1234");
        props.put("service.factoryPid", "dev.strata.device");
        props.put("felix.fileinstall.filename", "file:/opt/strata/deploy/dev.strata.device-cache0.cfg");
        props.put("name", "cache0");
        props.put("type", "linear");
        props.put("arg.device", "disk0");
        props.put("arg.offset", 4096L);
        DeviceDefinition def = DefinitionCodec.decode("dev.strata.device.1234", props);
        assertEquals(new DeviceDefinition("cache0", "linear", Map.of("device", "disk0", "offset", "4096")), def);
    }

    @Test
    void nameFromTheNamedPidOrTheFileInstallFile() {
        Hashtable<String, Object> props = new Hashtable<>();
        props.put("type", "memory");
        props.put("arg.size", "1M");
        assertEquals("ram0", DefinitionCodec.decode("dev.strata.device~ram0", props).name());
        props.put("felix.fileinstall.filename", "file:/opt/strata/deploy/dev.strata.device-ram1.cfg");
        assertEquals("ram1", DefinitionCodec.decode("dev.strata.device.77", props).name());
    }

    @Test
    void invalidDefinitionsAreRefused() {
        Hashtable<String, Object> props = new Hashtable<>();
        props.put("type", "memory");
        assertTrue(assertThrows(InvalidArgumentException.class, () -> DefinitionCodec.decode("x.1", props))
                .getMessage().contains("no 'name'"));
        props.put("name", "bad name");
        assertTrue(assertThrows(InvalidArgumentException.class, () -> DefinitionCodec.decode("x.1", props))
                .getMessage().contains("invalid device name"));
        props.put("name", "ok");
        props.remove("type");
        assertTrue(assertThrows(InvalidArgumentException.class, () -> DefinitionCodec.decode("x.1", props))
                .getMessage().contains("no 'type'"));
    }

    @Test
    void mergeKeepsForeignPropertiesAndReplacesTheDefinition() {
        Hashtable<String, Object> current = new Hashtable<>();
        current.put("service.pid", "dev.strata.device.1");
        current.put("service.factoryPid", "dev.strata.device");
        current.put("felix.fileinstall.filename", "file:/x/deploy/dev.strata.device-d.cfg");
        current.put("name", "d");
        current.put("type", "linear");
        current.put("arg.device", "a");
        current.put("arg.offset", "4096");
        Dictionary<String, Object> merged = DefinitionCodec.merge(current,
                new DeviceDefinition("d", "linear", Map.of("device", "b")));
        assertEquals("file:/x/deploy/dev.strata.device-d.cfg", merged.get("felix.fileinstall.filename"));
        assertEquals("b", merged.get("arg.device"));
        assertEquals(null, merged.get("arg.offset"), "an argument no longer given is gone");
        assertEquals(null, merged.get("service.pid"));
        assertEquals(4, merged.size());
        assertEquals(new DeviceDefinition("d", "linear", Map.of("device", "b")), DefinitionCodec.decode("p", merged));
    }

    @Test
    void identityAndTunablesRoundTrip() {
        DeviceDefinition def = new DeviceDefinition("wb0", "writeboost", java.util.Map.of("backing", "d", "cache", "c"),
                "6f1c2a3e-0000-4000-8000-000000000001", java.util.Map.of("writeback_threshold", "50"));
        java.util.Dictionary<String, Object> props = DefinitionCodec.encode(def);
        assertEquals("6f1c2a3e-0000-4000-8000-000000000001", props.get("id"));
        assertEquals("50", props.get("tunable.writeback_threshold"));
        assertEquals(def, DefinitionCodec.decode("dev.strata.device~wb0", props));
        // a definition written before identities existed has none until it is first loaded
        props.remove("id");
        assertEquals(null, DefinitionCodec.decode("dev.strata.device~wb0", props).id());
    }
}
