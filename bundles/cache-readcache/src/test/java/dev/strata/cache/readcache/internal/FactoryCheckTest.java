package dev.strata.cache.readcache.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.strata.api.InvalidArgumentException;
import dev.strata.api.ReadCachePolicy;
import dev.strata.api.TargetArguments;
import dev.strata.readcache.policies.internal.LruPolicy;
import dev.strata.readcache.policies.internal.NHitPolicy;
import dev.strata.readcache.policies.internal.WTinyLfuPolicy;
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
    static final String DEVICES = "origin=o cache=c ";
    final ReadcacheFactory factory = new ReadcacheFactory();

    FactoryCheckTest() {
        factory.addPolicy(new LruPolicy(), Map.of(ReadCachePolicy.NAME, "lru"));
        factory.addPolicy(new NHitPolicy(), Map.of(ReadCachePolicy.NAME, "nhit"));
        factory.addPolicy(new WTinyLfuPolicy(), Map.of(ReadCachePolicy.NAME, "wtinylfu"));
    }

    static Map<String, String> args(String words) {
        return TargetArguments.parse(List.of((DEVICES + words).trim().split(" +")));
    }

    SimpleTargetContext context(String words) {
        return SimpleTargetContext.of("rc0", DEVICES + words)
                .with("o", new CrashableDevice("o", 1 << 20, 4096))
                .with("c", new CrashableDevice("c", 8192 + 64 * 4096, 4096));
    }

    @ParameterizedTest
    @ValueSource(strings = {"block_size=3000", "block_size=12288", "block_size=x", "sequential_cutoff=-1",
            "write_promote=maybe", "readahead=5000", "format=perhaps", "policy=nhit threshold=0",
            "policy=lru no_such=1", "policy=bogus format=true", "cache_size=lots"})
    void refusedWithTheLineCreateGives(String words) {
        String line = assertThrows(InvalidArgumentException.class, () -> factory.check(args(words))).getMessage();
        String created = assertThrows(InvalidArgumentException.class,
                () -> factory.create(context(words)).close()).getMessage();
        assertEquals(created, line, words);
        assertFalse(line.contains("\n"), line);
    }

    @Test
    void aPolicyNotInstalledIsRefusedForAFormat() {
        assertEquals("readcache: no policy 'bogus' is installed; installed: lru, nhit, wtinylfu",
                assertThrows(InvalidArgumentException.class,
                        () -> factory.check(args("policy=bogus format=true"))).getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "format=true", "policy=lru", "policy=nhit format=true", "block_size=8192",
            "sequential_cutoff=8M write_promote=on", "readahead=64k", "cache_size=128k format=true"})
    void goodArgumentsPass(String words) throws Exception {
        factory.check(args(words));
        factory.create(context(words)).close();
    }
}
