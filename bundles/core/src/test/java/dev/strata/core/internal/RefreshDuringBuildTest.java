package dev.strata.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.strata.api.DeviceInfo;
import dev.strata.api.Target;
import dev.strata.api.TargetContext;
import dev.strata.api.TargetFactory;

/** A build that dies of a refreshed class loader waits for the factory, and says so without class names. */
class RefreshDuringBuildTest extends ManagerFixture {

    static final class RefreshedFactory implements TargetFactory {
        @Override
        public String usage() {
            return "gone";
        }

        @Override
        public List<String> lowerDevices(Map<String, String> arguments) {
            return List.of();
        }

        @Override
        public Target create(TargetContext context) {
            throw new NoClassDefFoundError("dev/strata/cache/writeboost/internal/index/CacheMap");
        }
    }

    @Test
    void theReasonIsOneLineWithoutAClassName() throws Exception {
        m.addFactory(TestTargets.entry(new RefreshedFactory(), "gone"));
        String key = store.putExternal(new DeviceDefinition("g0", "gone", args()));
        m.definitionChanged(key).get(30, TimeUnit.SECONDS);
        // the build runs on the manager's own thread after the definition is applied: wait for
        // its outcome (before it, the device waits for the type as any unbuilt device does)
        GateTest.await(() -> m.info("g0").map(i -> String.valueOf(i.waitingFor()).contains("refreshed")).orElse(false),
                "the failed build's reason");
        DeviceInfo d = m.info("g0").orElseThrow();
        String why = d.waitingFor() + " / " + m.status("g0").get("last_error");
        assertEquals("waiting for target type 'gone' (its bundle is being refreshed) / null", why);
        assertFalse(why.contains("Error") || why.contains("java."), why);
    }
}
