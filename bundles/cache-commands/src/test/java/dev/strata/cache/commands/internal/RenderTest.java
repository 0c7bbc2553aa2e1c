package dev.strata.cache.commands.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Parameter;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Descriptor;
import org.junit.jupiter.api.Test;

import dev.strata.api.CacheMode;
import dev.strata.api.CacheTarget.Keys;

/** The texts, exactly: what a user reads and what scripts may parse. */
class RenderTest {
    static final long MIB = 1 << 20;

    @Test
    void progressAndCancellationLinesReadAsDocumented() {
        assertEquals("writeback wb0: 6,958 of 8,192 blocks left (15%), 12.3 MiB/s",
                Render.progress("wb0", 6958, 1234, 12.34 * MIB));
        assertEquals("writeback wb0: 6,958 of 8,192 blocks left (15%), 12.3 MiB/s, ETA 2 s",
                Render.progress("wb0", 6958, 1234, 12.34 * MIB, 4096));
        assertEquals("writeback wb0: 0 of 8,192 blocks left (100%), 12.3 MiB/s", Render.progress("wb0", 0, 8192, 12.34 * MIB, 4096));
        assertEquals("3 min 05 s", Render.duration(185));
        assertEquals("2 h 10 min", Render.duration(7800));
        assertEquals("wb0: writeback cancelled: 1,234 of 8,192 blocks written back, 6,958 still dirty",
                Render.cancelled("wb0", "writeback", 1234, 6958));
        assertEquals("wb0: clean; 8,192 blocks written back in 3.2 s", Render.clean("wb0", 8192, 3_200_000_000L));
        assertEquals("wb0: clean; 1 block written back in 0.1 s", Render.clean("wb0", 1, 100_000_000L));
        assertEquals("writeback wb0: 1 of 1 block left (0%), 4.0 KiB/s", Render.progress("wb0", 1, 0, 4096));
        assertEquals("wb0: writeback cancelled: 0 of 1 block written back, 1 still dirty",
                Render.cancelled("wb0", "writeback", 0, 1));
        assertEquals("wb0: clean (nothing to write back)", Render.clean("wb0", 0, 5));
    }

    @Test
    void sizesAreIecAndRawWithBytes() {
        assertEquals("512 B", Render.size(512));
        assertEquals("1.5 KiB", Render.size(1536));
        assertEquals("2.0 GiB", Render.size(2L << 30));
        assertEquals("1,500 (5.8 MiB)", Render.value("dirty_blocks", "1500", 4096, false));
        assertEquals("1500", Render.value("dirty_blocks", "1500", 4096, true));
        assertEquals("16.0 MiB", Render.value("io_read_bytes", "16777216", 4096, false));
        assertEquals("70", Render.value("writeback_threshold", "70", 4096, false));
        assertEquals("1.0 MiB", Render.value("bypass_threshold", "1048576", 4096, false));
        assertEquals("4.0 MiB", Render.value("sequential_cutoff", "4194304", 4096, false));
        assertEquals("1048576", Render.value("bypass_threshold", "1048576", 4096, true));
        assertEquals("modulator", Render.value("writeback.controller", "modulator", 4096, false));
        assertEquals("120 µs", Render.micros(120));
        assertEquals("1.5 ms", Render.micros(1500));
        assertEquals("2.0 s", Render.micros(2_000_000));
    }

    static CacheStatus status(Map<String, String> values, long dirty) {
        return new CacheStatus("wb0", CacheMode.WRITEBACK, 4096,
                8192, 4096, dirty, values);
    }

    @Test
    void theSummaryIsOneLineFromTheCacheApiKeys() {
        Map<String, String> v = new LinkedHashMap<>();
        v.put(Keys.READ_HITS, "87");
        v.put(Keys.READ_MISSES, "13");
        v.put(Keys.WRITEBACK_RATE, "3000");
        v.put(Keys.WRITEBACK_ERROR, "");
        v.put(Keys.READ_LATENCY_P99, "120");
        v.put(Keys.WRITE_LATENCY_P99, "2500");
        assertEquals("wb0: writeback, 16.0 MiB of 32.0 MiB cached (50%), 4.0 MiB dirty, read hits 87%, "
                + "writing back at 11.7 MiB/s, p99 read 120 µs / write 2.5 ms", Render.summary(status(v, 1024), false));
        v.put(Keys.WRITEBACK_ERROR, "slow at offset 4096: I/O error");
        assertTrue(Render.summary(status(v, 1024), false).contains(", writeback failing (slow at offset 4096: I/O error), "));
        // writecache counts its writeback errors: none is not a failure
        v.put(Keys.WRITEBACK_ERROR, "0");
        assertTrue(Render.summary(status(v, 1024), false).contains(", writing back at 11.7 MiB/s, "));
        assertEquals("wb0: writeback, 0 B of 32.0 MiB cached (0%), 0 B dirty, clean, p99 read 0 µs / write 0 µs",
                Render.summary(new CacheStatus("wb0", CacheMode.WRITEBACK, 4096, 8192, 0, 0,
                        Map.of(Keys.WRITEBACK_ERROR, "0", Keys.READ_LATENCY_P99, "0", Keys.WRITE_LATENCY_P99, "0")), false));
        v.put(Keys.WRITEBACK_ERROR, "3");
        assertTrue(Render.summary(status(v, 1024), false).contains(", writeback failing (3 errors; log:tail shows them), "));
        // a refused switch to writearound: the mode is writeback, new writes already go around
        v.put(Keys.MODE_PENDING, "writearound");
        assertTrue(Render.summary(status(v, 1024), false).startsWith("wb0: writeback (switching to writearound "
                + "once the dirty blocks are written back; new writes go around), "), Render.summary(status(v, 1024), false));
        v.remove(Keys.MODE_PENDING);
        v.put(Keys.WRITEBACK_ERROR, "");
        assertEquals("wb0: writeback, 16777216 B of 33554432 B cached (50%), 0 B dirty, read hits 87%, clean, "
                + "p99 read 120 µs / write 2.5 ms", Render.summary(status(v, 0), true));
    }

    @Test
    void aCacheThatNeverHoldsDirtyDataShowsNoDirtyOrWritebackFigures() {
        // a readcache reports neither a writeback rate nor a writeback error
        Map<String, String> v = new LinkedHashMap<>(Map.of(Keys.READ_HITS, "3", Keys.READ_MISSES, "1",
                Keys.READ_LATENCY_P99, "120"));
        assertEquals("wb0: writeback, 16.0 MiB of 32.0 MiB cached (50%), read hits 75%, p99 read 120 µs",
                Render.summary(status(v, 0), false));
        v.put(Keys.READ_HITS, "0");
        v.put(Keys.READ_MISSES, "0");
        assertEquals("wb0: writeback, 16.0 MiB of 32.0 MiB cached (50%), no reads yet", Render.summary(status(v, 0), false));
        v.put(Keys.READ_HITS, "3");
        v.put(Keys.READ_MISSES, "1");
        v.put(Keys.WRITEBACK_RATE, "0"); // a cache that writes back: its dirty figure and state are shown
        assertTrue(Render.summary(status(v, 0), false).contains(", 0 B dirty, read hits 75%, clean, "),
                Render.summary(status(v, 0), false));
    }

    @Test
    void aPendingModeSwitchIsShownAndAskingForTheModeAgainCancelsIt() {
        java.util.Set<CacheMode> modes = java.util.EnumSet.of(CacheMode.WRITEBACK, CacheMode.WRITEAROUND);
        assertEquals("disk: writeback, switching to writearound once its 7,680 dirty blocks are written back "
                + "(new writes go around) (supported: writeback, writearound)",
                Render.modes("disk", CacheMode.WRITEBACK, "writearound", 7680, modes));
        assertEquals("disk: writeback (supported: writeback, writearound)", Render.modes("disk", CacheMode.WRITEBACK, modes));
        assertEquals("disk: writeback (cancels the pending switch to writearound: new writes are cached again)",
                Render.pendingCancelled("disk", CacheMode.WRITEBACK, "writearound"));
    }

    @Test
    void aControllerThatIsNotInstalledIsNamedAsSuch() {
        java.util.Set<String> installed = new java.util.TreeSet<>(List.of("modulator", "pi", "idle"));
        assertEquals(" (no controller 'modulater' is installed: the built-in one paces writeback until it is; "
                + "installed: idle, modulator, pi)", Render.controllerNote(Keys.CONTROLLER, "modulater", installed));
        assertEquals("", Render.controllerNote(Keys.CONTROLLER, "pi", installed));
        assertEquals("", Render.controllerNote(Keys.CONTROLLER, "builtin", installed));
        assertEquals("", Render.controllerNote("writeback_threshold", "modulater", installed));
        assertEquals(" (no controller 'pi' is installed: the built-in one paces writeback until it is; none is installed)",
                Render.controllerNote(Keys.CONTROLLER, "pi", java.util.Set.of()));
    }

    @Test
    void allGroupsEveryNonEmptyValue() {
        Map<String, String> v = new LinkedHashMap<>();
        v.put("state", "active");
        v.put("io_read_bytes", "2048");
        v.put(Keys.MODE, "writeback");
        v.put(Keys.DIRTY_BLOCKS, "1024");
        v.put(Keys.READ_HITS, "1");
        v.put(Keys.WRITEBACK_ERROR, "");
        v.put(Keys.WRITTEN_BACK_BLOCKS, "3");
        v.put("read_latency_us_p50", "7");
        v.put("segments_used", "2");
        String all = Render.all(status(v, 1024), false);
        String[] lines = all.split("\n", 2);
        assertEquals(""
                + "state\n"
                + "  state                active\n"
                + "  mode                 writeback\n"
                + "capacity\n"
                + "  dirty_blocks         1,024 (4.0 MiB)\n"
                + "  segments_used        2\n"
                + "hits\n"
                + "  read_hits            1\n"
                + "writeback\n"
                + "  written_back_blocks  3 (12.0 KiB)\n"
                + "latency\n"
                + "  read_latency_us_p50  7\n"
                + "other\n"
                + "  io_read_bytes        2.0 KiB\n", lines[1]);
        assertEquals(Render.summary(status(v, 1024), false), lines[0]);
    }

    @Test
    void controllersAreATable() {
        assertEquals("NAME       BUNDLE                          VERSION\n"
                + "idle       dev.strata.daemons              0.1.0\n"
                + "modulator  dev.strata.daemons              0.1.0\n"
                + "builtin    (in every cache: the fallback)  -\n",
                Render.controllers(List.of(new Render.Controller("idle", "dev.strata.daemons", "0.1.0"),
                        new Render.Controller("modulator", "dev.strata.daemons", "0.1.0"))));
    }

    @Test
    void theProgressLineRewritesItselfAndCountsAcrossCalls() {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        AtomicLong now = new AtomicLong(0);
        ProgressLine p = new ProgressLine(new PrintStream(b, true), "wb0", 4096, 2000, now::get);
        now.set(1_000_000_000L);
        p.update(1744, 256); // 1 MiB in 1 s
        p.nextCall();
        now.set(2_000_000_000L);
        p.update(1488, 256);
        p.end();
        assertEquals("\rwriteback wb0: 1,744 of 2,000 blocks left (12%), 1.0 MiB/s, ETA 7 s"
                + "\rwriteback wb0: 1,488 of 2,000 blocks left (25%), 1.0 MiB/s, ETA 6 s\n", b.toString(StandardCharsets.UTF_8));
        assertEquals(512, p.writtenBack());
        // the dirty count fell by more than the target wrote back (the background daemon wrote
        // back too): the report counts only what the writeback reported, over a consistent total
        p.settle(1000);
        assertEquals(512, p.writtenBack());
        assertEquals(1000, p.dirty());
        assertEquals("wb0: writeback cancelled: 512 of 1,512 blocks written back, 1,000 still dirty",
                Render.cancelled("wb0", "writeback", p.writtenBack(), p.dirty()));
    }

    @Test
    void keyValueTakesBothForms() {
        assertEquals(List.of("wb0", "writeback_threshold", "50"), List.of(CacheCommands.keyValue("wb0", "writeback_threshold", "50")));
        assertEquals(List.of("wb0", "writeback_threshold", "50"), List.of(CacheCommands.keyValue("wb0", "writeback_threshold=50")));
        assertEquals(List.of("wb0", "writeback.controller", "pi"), List.of(CacheCommands.keyValue("wb0", "writeback.controller=pi")));
    }

    /** help shows what each command and argument is for. */
    @Test
    void everyCommandAndParameterHasADescriptor() {
        int commands = 0;
        for (Method m : CacheCommands.class.getDeclaredMethods()) {
            if (!Modifier.isPublic(m.getModifiers()) || Modifier.isStatic(m.getModifiers())) {
                continue;
            }
            commands++;
            assertNotNull(m.getAnnotation(Descriptor.class), m.toString());
            for (Parameter p : m.getParameters()) {
                if (p.getType() != CommandSession.class) {
                    assertNotNull(p.getAnnotation(Descriptor.class), m + " " + p);
                }
            }
        }
        assertEquals(14, commands);
    }
}
