package dev.strata.cache.support.tunables;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.InvalidArgumentException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class TunableTableTest {
    static final Tunable<Long> THRESHOLD = Tunable.number("threshold", 70, 0, 100, "percent busy");
    static final Tunable<Long> BYPASS = Tunable.size("bypass", 1 << 20, 0, 1L << 30, "bypass size")
            .check(v -> v == 0 || v >= 4096, "is too small; use 0 (off) or at least 4096 bytes");
    static final Tunable<Boolean> AROUND = Tunable.bool("around", false, "write around");
    static final Tunable<String> CONTROLLER = Tunable.name("controller", "modulator", "controller name");
    static final TunableTable TABLE = new TunableTable("cachex", List.of(THRESHOLD, BYPASS, AROUND, CONTROLLER));

    @Test
    void defaultsAndChanges() {
        TunableTable.Snapshot d = TABLE.defaults();
        assertEquals(70L, d.get(THRESHOLD));
        TunableTable.Snapshot s = d.with("threshold", "10").with("bypass", "64k").with("around", "yes")
                .with("controller", "PI");
        assertEquals(10L, s.get(THRESHOLD));
        assertEquals(65536L, s.get(BYPASS));
        assertEquals(true, s.get(AROUND));
        assertEquals("pi", s.get(CONTROLLER));
        assertEquals(70L, d.get(THRESHOLD), "a snapshot never changes");
        assertEquals(Map.of("threshold", "10", "bypass", "65536", "around", "true", "controller", "pi"), s.asMap());
        assertEquals(List.of("threshold", "bypass", "around", "controller"), List.copyOf(s.asMap().keySet()));
        assertEquals(s, d.withAll(Map.of("threshold", "10", "bypass", "64k", "around", "yes", "controller", "pi",
                "other", "ignored")));
    }

    @Test
    void badValuesAreOneClearLine() {
        TunableTable.Snapshot d = TABLE.defaults();
        assertEquals("cachex: threshold=101 is out of range; allowed 0 to 100",
                assertThrows(InvalidArgumentException.class, () -> d.with("threshold", "101")).getMessage());
        assertEquals("cachex: bypass=100 is too small; use 0 (off) or at least 4096 bytes",
                assertThrows(InvalidArgumentException.class, () -> d.with("bypass", "100")).getMessage());
        assertEquals("cachex: bypass=2G is out of range; allowed 0 bytes to 1 GiB",
                assertThrows(InvalidArgumentException.class, () -> d.with("bypass", "2G")).getMessage());
        assertEquals("cachex: around=maybe is not a boolean; use true or false",
                assertThrows(InvalidArgumentException.class, () -> d.with("around", "maybe")).getMessage());
        assertTrue(assertThrows(InvalidArgumentException.class, () -> d.with("controller", "a b")).getMessage()
                .startsWith("cachex: controller=a b is not a controller name"));
        String unknown = assertThrows(InvalidArgumentException.class, () -> d.with("nope", "1")).getMessage();
        assertTrue(unknown.startsWith("cachex: unknown argument 'nope'; allowed: "), unknown);
        assertThrows(IllegalArgumentException.class, () -> d.get(Tunable.number("threshold", 1, 0, 1, "x")),
                "a tunable of another table");
    }

    @Test
    void helpRendersEveryTunableOnce() {
        assertEquals("threshold=70 (0 to 100): percent busy\n"
                + "bypass=1048576 (0 bytes to 1 GiB): bypass size\n"
                + "around=false (true or false): write around\n"
                + "controller=modulator (a name): controller name\n", TABLE.help());
    }

    @Test
    void concurrentChangesAreNotLost() throws Exception {
        TunableCell<TunableTable.Snapshot> cell = new TunableCell<>(TABLE.defaults());
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<?> a = pool.submit(() -> {
                for (int i = 0; i < 2000; i++) {
                    cell.update(s -> s.with("threshold", "5"));
                }
            });
            Future<?> b = pool.submit(() -> {
                for (int i = 0; i < 2000; i++) {
                    cell.update(s -> s.with("around", "true"));
                }
            });
            a.get(30, TimeUnit.SECONDS);
            b.get(30, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }
        assertEquals(5L, cell.get().get(THRESHOLD));
        assertEquals(true, cell.get().get(AROUND));
        TunableTable.Snapshot before = cell.get();
        assertThrows(InvalidArgumentException.class, () -> cell.update(s -> s.with("threshold", "x")));
        assertSame(before, cell.get(), "a refused value changes nothing");
    }
}
