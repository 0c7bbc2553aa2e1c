package dev.strata.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.strata.api.Claim;
import dev.strata.api.DeviceHandle;
import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceState;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Target;
import dev.strata.api.TargetArguments;
import dev.strata.api.TargetContext;
import dev.strata.api.TargetFactory;

/**
 * {@link TargetFactory#check}: an argument error of the new target is refused before anything is
 * drained, paused, closed, staged or stored — for the in-place switch (whose build comes after the
 * old target is closed and the commit), the reload onto the same devices (which closes the old
 * target first) and the attach. The device stays on its old target, its stored definition is
 * unchanged, the old target was never suspended, and the new factory's create was never called.
 */
class ArgumentCheckTest extends ManagerFixture {
    private static final String REFUSAL = "tstrict: threshold=500 is out of range; allowed 0 to 100";
    private StrictFactory strict;

    /**
     * {@code tstrict backing=DEV cache=DEV [threshold=0..100]}: a tcache whose {@code threshold} is a
     * checked number; create and check refuse a bad one with the same line (check by calling the
     * parsing create uses). {@code failBuild}: create fails with an I/O error after the arguments
     * passed (what no check can know).
     */
    static final class StrictFactory implements TargetFactory {
        final CacheTestTarget.Factory inner;
        final AtomicInteger creates = new AtomicInteger();
        volatile boolean failBuild;

        StrictFactory(CacheTestTarget.Factory inner) {
            this.inner = inner;
        }

        @Override
        public String usage() {
            return "tstrict backing=DEV cache=DEV [threshold=0..100]";
        }

        @Override
        public List<String> lowerDevices(Map<String, String> arguments) {
            return inner.lowerDevices(arguments);
        }

        @Override
        public Map<String, Claim> claims(Map<String, String> arguments) {
            return inner.claims(arguments);
        }

        @Override
        public String backingArgument() {
            return "backing";
        }

        @Override
        public void check(Map<String, String> arguments) {
            parse(arguments);
        }

        @Override
        public Target create(TargetContext context) throws IOException {
            creates.incrementAndGet();
            parse(context.arguments());
            if (failBuild) {
                throw new IOException("tstrict: the cache device failed");
            }
            return inner.create(context);
        }

        private static void parse(Map<String, String> arguments) {
            TargetArguments.of("tstrict", arguments, CacheTestTarget.KEYS).number("threshold", 10, 0, 100);
        }
    }

    @BeforeEach
    void strictType() {
        strict = new StrictFactory(caches);
        m.addFactory(TestTargets.entry(strict, "tstrict"));
    }

    /** What must hold after a refusal: the old target serving, untouched, the stored definition the old one. */
    private void unchanged(Target old, DeviceDefinition storedBefore) throws IOException {
        DeviceInfo i = m.info("wb0").orElseThrow();
        assertEquals(DeviceState.ACTIVE, i.state());
        assertEquals("tcache", i.type());
        assertEquals(null, i.waitingFor());
        assertSame(old, caches.last, "no other tcache was built");
        CacheTestTarget t = (CacheTestTarget) old;
        assertFalse(t.closed, "the old target was not closed");
        assertEquals(0, t.suspends.get(), "no pause was taken (the old target was never suspended)");
        assertEquals(storedBefore, stored("wb0"), "the stored definition is unchanged");
        assertEquals(0, strict.creates.get(), "the new target's create was never called");
    }

    private DeviceDefinition stored(String name) {
        return store.snapshot().values().stream().filter(d -> d.name().equals(name)).findFirst().orElseThrow();
    }

    @Test
    void aSwitchsUnknownArgumentListsTheAllowedKeysWithoutTheBackingOne() throws Exception {
        // a trial: "allowed: backing, …", then backing= answered "leave out backing=" — a circle
        cacheStack();
        Target old = caches.last;
        DeviceDefinition before = stored("wb0");
        Map<String, String> bad = args("cache", "cache0", "bogus", "1");
        for (org.junit.jupiter.api.function.Executable call : List.<org.junit.jupiter.api.function.Executable>of(
                () -> m.checkSwitch("wb0", "tstrict", bad, "disk0", Map.of()),
                () -> m.switchTarget("wb0", "tstrict", bad, "disk0", Map.of()))) {
            InvalidArgumentException e = assertThrows(InvalidArgumentException.class, call);
            assertEquals("tcache: unknown argument 'bogus'; allowed: cache, format, threshold", e.getMessage()); // tstrict's lower devices are tcache's
        }
        unchanged(old, before);
    }

    @Test
    void inPlaceSwitchRefusesABadValueBeforeThePause() throws Exception {
        cacheStack();
        Target old = caches.last;
        DeviceDefinition before = stored("wb0");
        try (DeviceHandle h = m.open("wb0", "nbd:wb0")) {
            Map<String, String> bad = args("cache", "cache0", "threshold", "500");
            InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                    () -> m.checkSwitch("wb0", "tstrict", bad, "disk0", Map.of("format", "true")));
            assertEquals(REFUSAL, e.getMessage());
            e = assertThrows(InvalidArgumentException.class,
                    () -> m.switchTarget("wb0", "tstrict", bad, "disk0", Map.of("format", "true")));
            assertEquals(REFUSAL, e.getMessage());
            unchanged(old, before);
            java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(4096);
            h.read(0, b); // still served
            assertEquals(0, b.remaining());
        }
        restart();
        assertEquals("tcache", m.info("wb0").orElseThrow().type(), "the old definition after a restart");
        assertEquals(DeviceState.ACTIVE, m.info("wb0").orElseThrow().state());
    }

    @Test
    void switchOntoAnotherCacheDeviceRefusesItTheSameWay() throws Exception {
        cacheStack();
        disk("cache1");
        Target old = caches.last;
        DeviceDefinition before = stored("wb0");
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                () -> m.switchTarget("wb0", "tstrict", args("cache", "cache1", "threshold", "500"), "disk0", Map.of()));
        assertEquals(REFUSAL, e.getMessage());
        unchanged(old, before);
    }

    @Test
    void reloadOntoTheSameDevicesRefusesABadValueBeforeClosingTheOldTarget() throws Exception {
        cacheStack();
        Target old = caches.last;
        DeviceDefinition before = stored("wb0");
        int closes = caches.closes.get();
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                () -> m.reload("wb0", "tstrict", args("backing", "disk0", "cache", "cache0", "threshold", "500")));
        assertEquals(REFUSAL, e.getMessage());
        assertEquals(closes, caches.closes.get(), "the old target was not closed and reopened");
        unchanged(old, before);
    }

    @Test
    void attachRefusesABadValueBeforeAnythingIsStaged() throws Exception {
        disk("disk0");
        disk("cache0");
        Map<String, DeviceDefinition> before = store.snapshot();
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                () -> m.attach("disk0", "tstrict", args("cache", "cache0", "threshold", "500"), null));
        assertEquals(REFUSAL, e.getMessage());
        assertEquals(0, strict.creates.get(), "nothing was built");
        assertEquals(before, store.snapshot(), "nothing was staged or stored");
        assertEquals("tfile", m.info("disk0").orElseThrow().type());
        assertTrue(m.info("disk0.tfile").isEmpty());
    }

    @Test
    void goodArgumentsStillSwitchInPlace() throws Exception {
        cacheStack();
        m.switchTarget("wb0", "tstrict", args("cache", "cache0", "threshold", "50"), "disk0", Map.of("format", "true"));
        DeviceInfo i = m.info("wb0").orElseThrow();
        assertEquals("tstrict", i.type());
        assertEquals(DeviceState.ACTIVE, i.state());
        assertEquals("50", stored("wb0").arguments().get("threshold"));
        assertEquals(1, strict.creates.get());
    }

    /** A build that fails after the commit (what no check can know): WHY says the build failed, once. */
    @Test
    void aBuildThatFailsAfterTheCommitIsNotCalledAMissingType() throws Exception {
        cacheStack();
        strict.failBuild = true;
        IOException e = assertThrows(IOException.class, () -> m.switchTarget("wb0", "tstrict",
                args("cache", "cache0", "threshold", "50"), "disk0", Map.of("format", "true")));
        assertTrue(e.getMessage().contains("committed, but its build failed"), e.getMessage());
        String why = m.info("wb0").orElseThrow().waitingFor();
        assertEquals("waiting for a successful build: switch to tstrict committed, but its build failed: "
                + "tstrict: the cache device failed", why);
        assertEquals(why.indexOf("the cache device failed"), why.lastIndexOf("the cache device failed"),
                "the failure once: " + why);
    }
}
