package dev.strata.cache.writecache.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.strata.api.InvalidArgumentException;
import dev.strata.api.TargetArguments;
import dev.strata.cache.writecache.internal.io.Options;
import dev.strata.cache.writecache.internal.io.WritecacheSubject;
import dev.strata.testsupport.crash.CrashableDevice;
import dev.strata.testsupport.target.SimpleTargetContext;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code check}: what create refuses for the arguments alone, refused with create's very line and
 * no device (the manager calls it before an in-place cache:switch closes the old cache); good
 * arguments pass.
 */
class FactoryCheckTest {
    static final String DEVICES = "backing=slow cache=fast ";
    final WritecacheFactory factory = new WritecacheFactory(Options.defaults().manual());

    static Map<String, String> args(String words) {
        return TargetArguments.parse(List.of((DEVICES + words).trim().split(" +")));
    }

    SimpleTargetContext context(String words) {
        return SimpleTargetContext.of("wc0", DEVICES + words)
                .with("slow", new CrashableDevice("slow", 1 << 20, 512))
                .with("fast", new CrashableDevice("fast", WritecacheSubject.cacheBytes(32, 4096), 512));
    }

    @ParameterizedTest
    @ValueSource(strings = {"high_watermark=500", "block_size=1234", "block_size=8192", "block_size=x",
            "low_watermark=60 high_watermark=50", "writeback_batch=0", "autocommit_blocks=x", "autocommit_time=-1",
            "max_age=86400001", "cleaner=maybe", "pause_writeback=3600001", "writeback_threshold=101",
            "writeback.controller=a/b", "format=perhaps", "cache_size=lots", "cache_size=1", "speed=11"})
    void refusedWithTheLineCreateGives(String words) {
        String line = assertThrows(InvalidArgumentException.class, () -> factory.check(args(words))).getMessage();
        String created = assertThrows(InvalidArgumentException.class,
                () -> factory.create(context(words)).close()).getMessage();
        assertEquals(created, line, words);
        assertFalse(line.contains("\n"), line);
    }

    @Test
    void theTrialsValuesAreRefused() {
        assertEquals("writecache: high_watermark=500 is out of range; allowed 0 to 100",
                assertThrows(InvalidArgumentException.class, () -> factory.check(args("high_watermark=500"))).getMessage());
        assertEquals("writecache: block_size=1234 is not supported; use 512 or 4096",
                assertThrows(InvalidArgumentException.class, () -> factory.check(args("block_size=1234"))).getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "format=true", "block_size=512", "block_size=4096 format=true",
            "high_watermark=100 low_watermark=0", "cleaner=true", "writeback.controller=pi", "cache_size=64k format=true"})
    void goodArgumentsPass(String words) throws Exception {
        factory.check(args(words));
        factory.create(context(words)).close();
    }
}
