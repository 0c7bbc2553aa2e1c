package dev.strata.cache.writeboost.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.strata.api.InvalidArgumentException;
import dev.strata.api.TargetArguments;
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
    static final int MIB = 1 << 20;
    final WriteboostFactory factory = new WriteboostFactory();

    static final String DEVICES = "backing=b cache=c ";

    static Map<String, String> args(String words) {
        return TargetArguments.parse(List.of((DEVICES + words).trim().split(" +")));
    }

    /** create's refusal over real (blank) devices. */
    String createRefusal(String words) {
        CrashableDevice backing = new CrashableDevice("b", 64 * MIB, 4096);
        CrashableDevice cache = new CrashableDevice("c", 33 * MIB, 4096);
        return assertThrows(InvalidArgumentException.class, () -> factory.create(
                SimpleTargetContext.of("wb0", DEVICES + words).with("b", backing).with("c", cache)).close()).getMessage();
    }

    @ParameterizedTest
    @ValueSource(strings = {"buffers=1000", "buffers=1", "buffers=x", "flushers=0", "format=maybe",
            "writeback_threshold=500", "nr_max_batched_writeback=0", "update_record_interval=-1",
            "read_cache_threshold=128", "bypass_threshold=1k", "sequential_cutoff=lots", "write_around=perhaps",
            "cache_mode=sometimes", "writeback.controller=a/b", "io_timeout_ms=5", "speed=11"})
    void refusedWithTheLineCreateGives(String words) {
        Map<String, String> a = args(words);
        String line = assertThrows(InvalidArgumentException.class, () -> factory.check(a)).getMessage();
        assertEquals(createRefusal(words), line, words);
        assertFalse(line.contains("\n"), line);
    }

    @Test
    void theTrialsValueIsRefused() {
        assertEquals("writeboost: buffers=1000 is out of range; allowed 2 to 64",
                assertThrows(InvalidArgumentException.class, () -> factory.check(args("buffers=1000"))).getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "format=true", "buffers=2", "buffers=64 flushers=1", "writeback_threshold=0",
            "bypass_threshold=0 sequential_cutoff=8M", "cache_mode=writethrough", "writeback.controller=pi"})
    void goodArgumentsPass(String words) throws Exception {
        Map<String, String> a = args(words);
        factory.check(a);
        CrashableDevice backing = new CrashableDevice("b", 64 * MIB, 4096);
        CrashableDevice cache = new CrashableDevice("c", 33 * MIB, 4096);
        factory.create(SimpleTargetContext.of("wb0", DEVICES + words).with("b", backing).with("c", cache)).close();
    }
}
