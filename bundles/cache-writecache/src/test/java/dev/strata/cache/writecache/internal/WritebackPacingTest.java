package dev.strata.cache.writecache.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.BlockDevice;
import dev.strata.api.WritebackController;
import dev.strata.api.WritebackController.CacheLoad;
import dev.strata.api.WritebackController.Decision;
import dev.strata.cache.support.time.ManualClock;
import dev.strata.cache.writecache.internal.io.Options;
import dev.strata.cache.writecache.internal.io.WritecacheSubject;
import dev.strata.cache.writecache.internal.io.WritecacheTarget;
import dev.strata.testsupport.crash.CrashableDevice;
import dev.strata.testsupport.target.SimpleTargetContext;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Writeback paced through the factory's controller references: the cache binds the controller
 * named by {@code writeback.controller}, falls back to the modulator when it goes away and takes
 * it back when it returns (one session at a time); {@code pause_writeback} holds writeback while
 * writes go around.
 */
class WritebackPacingTest {
    /** Allows {@code grant} blocks at its first decision of each session, then asks to wait. */
    static final class Trickle implements WritebackController {
        final int grant;
        int sessionsOpen;
        final List<Map<String, String>> opened = new ArrayList<>();

        Trickle(int grant) {
            this.grant = grant;
        }

        @Override
        public Session open(String cache, Map<String, String> tunables) {
            opened.add(tunables);
            sessionsOpen++;
            return new Session() {
                int decisions;

                @Override
                public Decision decide(CacheLoad load) {
                    return decisions++ == 0 ? new Decision(grant, 0, -1) : Decision.waitFor(1_000_000_000L);
                }

                @Override
                public Map<String, String> status() {
                    return Map.of("decisions", Integer.toString(decisions));
                }

                @Override
                public void close() {
                    sessionsOpen--;
                }
            };
        }
    }

    final ManualClock clock = new ManualClock();
    final WritecacheFactory factory = new WritecacheFactory(Options.defaults().manual().withClock(clock));
    final CrashableDevice backing = new CrashableDevice("slow", 1 << 20, 512);
    final CrashableDevice cache = new CrashableDevice("fast", WritecacheSubject.cacheBytes(32, 4096), 512);

    WritecacheTarget open(String tunables) throws IOException {
        return (WritecacheTarget) factory.create(SimpleTargetContext.of("wc0", "backing=slow cache=fast " + tunables)
                .with("slow", backing).with("fast", cache));
    }

    static void writeBlocks(BlockDevice t, long first, int count) throws IOException {
        for (int i = 0; i < count; i++) {
            ByteBuffer b = ByteBuffer.allocate(4096);
            b.putLong(0, first + i + 1);
            t.write((first + i) * 4096, b, 0);
        }
        t.flush();
    }

    static Map<String, Object> props(String name) {
        return Map.of(WritebackController.NAME, name);
    }

    @Test
    void bindsTheNamedControllerFallsBackWhenItGoesAwayAndTakesItBack() throws IOException {
        try (WritecacheTarget t = open("writeback.controller=trickle high_watermark=10 low_watermark=0 pause_writeback=0")) {
            // nothing named trickle: the modulator paces (idle backing device: full batches)
            writeBlocks(t, 0, 8);
            t.backgroundOnce();
            assertEquals(0, t.cachedBlocks());
            assertEquals("builtin", t.status().get("writeback.controller.active"));
            assertEquals("true", t.status().get("writeback.controller.fallback"));
            assertEquals("70", t.status().get("writeback.controller.writeback_threshold"));

            Trickle trickle = new Trickle(3);
            factory.addController(trickle, props("trickle"));
            writeBlocks(t, 100, 8);
            t.backgroundOnce();
            assertEquals(5, t.cachedBlocks(), "the bound controller allowed 3 blocks, then asked to wait");
            Map<String, String> st = t.status();
            assertEquals("trickle", st.get("writeback.controller.active"));
            assertEquals("false", st.get("writeback.controller.fallback"));
            assertEquals("2", st.get("writeback.controller.decisions"));
            assertEquals(1, trickle.sessionsOpen);
            assertEquals(Map.of("writeback_threshold", "70"), trickle.opened.get(0));
            t.backgroundOnce();
            assertEquals(5, t.cachedBlocks(), "the controller asked to wait a second: not asked again before");
            assertEquals("2", t.status().get("writeback.controller.decisions"));
            clock.advance(1, TimeUnit.SECONDS);
            t.backgroundOnce();
            assertEquals(5, t.cachedBlocks(), "still waiting: the same session decides");
            assertEquals("3", t.status().get("writeback.controller.decisions"));
            assertEquals(1, trickle.opened.size());
            clock.advance(1, TimeUnit.SECONDS);

            factory.removeController(trickle, props("trickle"));
            t.backgroundOnce();
            assertEquals(0, t.cachedBlocks(), "the modulator took over");
            assertEquals("builtin", t.status().get("writeback.controller.active"));
            assertEquals(0, trickle.sessionsOpen, "the gone controller's session is closed");

            factory.addController(trickle, props("trickle"));
            writeBlocks(t, 200, 8);
            t.backgroundOnce();
            assertEquals(5, t.cachedBlocks());
            assertEquals("trickle", t.status().get("writeback.controller.active"));
            assertEquals(2, trickle.opened.size(), "a new session on the returned controller");
            assertEquals(1, trickle.sessionsOpen);
        }
    }

    @Test
    void pauseWritebackHoldsWritebackWhileWritesGoAround() throws IOException {
        try (WritecacheTarget t = open("high_watermark=50 low_watermark=0 pause_writeback=3000")) {
            writeBlocks(t, 0, 33); // 32 slots: the last block goes around to the backing device
            assertEquals("1", t.status().get("writes_around"));
            t.backgroundOnce();
            assertEquals(32, t.cachedBlocks(), "writeback paused: a write went around just now");
            assertEquals("1", t.status().get("writeback_paused"));
            clock.advance(2999, TimeUnit.MILLISECONDS);
            t.backgroundOnce();
            assertEquals(32, t.cachedBlocks());
            clock.advance(1, TimeUnit.MILLISECONDS);
            t.backgroundOnce();
            assertEquals(0, t.cachedBlocks(), "3000 ms after the last write around, writeback runs");
            assertEquals("0", t.status().get("writeback_paused"));
        }
    }

    @Test
    void latencyPercentilesAndTheControllerTunablesAreInStatus() throws IOException {
        try (WritecacheTarget t = open("writeback.controller=Trickle")) {
            writeBlocks(t, 0, 1);
            Map<String, String> st = t.status();
            for (String k : List.of("read_latency_us_p50", "write_latency_us_p99", "flush_latency_us_p999")) {
                assertTrue(st.containsKey(k), k);
            }
            assertEquals("trickle", st.get("writeback.controller"));
            assertEquals("3000", st.get("pause_writeback"));
        }
    }

    @Test
    void writesIntoTheCacheCountForTheControllersIdleTime() throws IOException {
        List<CacheLoad> loads = new ArrayList<>();
        factory.addController((cacheName, tunables) -> new WritebackController.Session() {
            @Override
            public Decision decide(CacheLoad load) {
                loads.add(load);
                return Decision.waitFor(1_000_000L);
            }

            @Override
            public Map<String, String> status() {
                return Map.of();
            }
        }, props("recorder"));
        try (WritecacheTarget t = open("writeback.controller=recorder high_watermark=0 low_watermark=0 pause_writeback=0")) {
            clock.advance(5, TimeUnit.SECONDS);
            writeBlocks(t, 0, 4); // into the cache: the backing device sees nothing
            clock.advance(200, TimeUnit.MILLISECONDS);
            t.backgroundOnce();
            assertEquals(200, loads.get(loads.size() - 1).idleMillis(), "idle since the last write, not since the start");
        }
    }

    /** Grants {@code grant} blocks (a setting, 1 to 100, default 1) at the first decision of each session. */
    static final class Granting implements WritebackController {
        final List<Map<String, String>> opened = new ArrayList<>();

        static int parse(String v) {
            int n = v.matches("[0-9]{1,3}") ? Integer.parseInt(v) : -1;
            if (n < 1 || n > 100) {
                throw new dev.strata.api.InvalidArgumentException("granting: grant=" + v + " is out of range; allowed 1 to 100");
            }
            return n;
        }

        @Override
        public Session open(String cache, Map<String, String> tunables) {
            opened.add(Map.copyOf(tunables));
            int first = parse(tunables.getOrDefault("grant", "1"));
            return new Session() {
                int grant = first;
                int decisions;

                @Override
                public Decision decide(CacheLoad load) {
                    return decisions++ == 0 ? new Decision(grant, 0, -1) : Decision.waitFor(1_000_000_000L);
                }

                @Override
                public boolean set(String key, String value) {
                    if (!key.equals("grant")) {
                        return false;
                    }
                    grant = parse(value);
                    decisions = 0;
                    return true;
                }

                @Override
                public Map<String, String> status() {
                    return Map.of("grant", Integer.toString(grant));
                }
            };
        }
    }

    @Test
    void aControllerSettingReachesTheSessionChangesItsDecisionAndSurvivesARebind() throws IOException {
        Granting g = new Granting();
        factory.addController(g, props("granting"));
        try (WritecacheTarget t = open("writeback.controller=granting high_watermark=10 low_watermark=0 pause_writeback=0")) {
            writeBlocks(t, 0, 8);
            t.backgroundOnce();
            assertEquals(7, t.cachedBlocks(), "the default grant: one block");
            t.message("writeback.grant", "2");
            assertEquals("2", t.status().get("writeback.grant"), "a setting the device manager persists and --all shows");
            t.backgroundOnce();
            assertEquals(5, t.cachedBlocks(), "the open session got grant=2 and granted 2 blocks");
            assertEquals("2", t.status().get("writeback.controller.grant"));

            dev.strata.api.InvalidArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(
                    dev.strata.api.InvalidArgumentException.class, () -> t.message("writeback.grant", "0"));
            assertEquals("writecache: writeback.grant=0 refused by controller granting, nothing changed: "
                    + "granting: grant=0 is out of range; allowed 1 to 100", e.getMessage());
            assertEquals("2", t.status().get("writeback.grant"));
            // a typo is refused, not kept as writeback.nosuch (persisted, passed on, doing nothing)
            e = org.junit.jupiter.api.Assertions.assertThrows(
                    dev.strata.api.InvalidArgumentException.class, () -> t.message("writeback.nosuch", "1"));
            assertEquals("writecache: writeback.nosuch is not a tunable of writeback controller granting, nothing changed;"
                    + " its tunables are listed in docs/daemons.md (for another controller's, set writeback.controller to"
                    + " it first)", e.getMessage());
            org.junit.jupiter.api.Assertions.assertNull(t.status().get("writeback.nosuch"));

            clock.advance(1, TimeUnit.SECONDS); // the session asked to wait a second
            factory.removeController(g, props("granting"));
            t.backgroundOnce(); // the built-in writes the rest back
            assertEquals(0, t.cachedBlocks());
            Granting updated = new Granting();
            factory.addController(updated, props("granting"));
            writeBlocks(t, 100, 8);
            t.backgroundOnce();
            assertEquals(6, t.cachedBlocks(), "the new session opened with grant=2");
            assertEquals("2", updated.opened.get(0).get("grant"));
            assertEquals("70", updated.opened.get(0).get("writeback_threshold"));
        }
    }
}
