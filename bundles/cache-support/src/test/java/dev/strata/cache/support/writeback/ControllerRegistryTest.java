package dev.strata.cache.support.writeback;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.strata.api.WritebackController;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ControllerRegistryTest {
    private static WritebackController controller() {
        return new WritebackController() { // a new object each time (a lambda here would be one shared instance)
            @Override
            public Session open(String cache, Map<String, String> tunables) {
                return null;
            }
        };
    }

    @Test
    void findsControllersByNameCaseInsensitivelyAndKeepsANewerOneWhenAnOlderGoes() {
        ControllerRegistry r = new ControllerRegistry();
        WritebackController old = controller();
        WritebackController newer = controller();
        r.add(old, Map.of(WritebackController.NAME, "PI"));
        assertSame(old, r.get("pi"));
        r.add(newer, Map.of(WritebackController.NAME, "pi"));
        r.remove(old, Map.of(WritebackController.NAME, "pi"));
        assertSame(newer, r.get("Pi"), "removing the replaced service must not drop its successor");
        r.remove(newer, Map.of(WritebackController.NAME, "pi"));
        assertNull(r.get("pi"));
        r.add(old, Map.of());
        assertNull(r.get(null));
    }

    @Test
    void aServiceNamedLikeTheBuiltInIsNotBound() {
        ControllerRegistry r = new ControllerRegistry();
        r.add(controller(), Map.of(WritebackController.NAME, "Builtin"));
        assertNull(r.get(Modulator.NAME), "builtin always means the cache's own controller");
    }
}
