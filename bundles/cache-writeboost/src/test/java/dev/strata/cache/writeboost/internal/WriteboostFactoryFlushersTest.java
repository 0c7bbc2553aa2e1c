package dev.strata.cache.writeboost.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.BlockDevice;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Target;
import dev.strata.api.TargetContext;
import dev.strata.cache.writeboost.internal.io.WriteboostCache;
import dev.strata.cache.writeboost.internal.testing.MemDevice;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The {@code flushers} argument: how many flusher threads (log writes in flight) the cache runs; out of range is refused. */
class WriteboostFactoryFlushersTest {
    static final long MIB = 1 << 20;

    static Target create(Map<String, String> args) throws Exception {
        MemDevice backing = new MemDevice("b", 64 * MIB);
        MemDevice cache = new MemDevice("c", 33 * MIB);
        return new WriteboostFactory().create(new TargetContext() {
            public String deviceName() { return "wbf"; }
            public Map<String, String> arguments() { return args; }
            public BlockDevice lowerDevice(String name) { return name.equals("b") ? backing : cache; }
        });
    }

    static long flusherThreads(Target t) {
        List<String> names = ((WriteboostCache) t).runningDaemons();
        return names.stream().filter(n -> n.contains("-flusher")).count();
    }

    @Test
    void threeFlushersByDefaultOneOrTwoOnRequest() throws Exception {
        Target three = create(Map.of("backing", "b", "cache", "c"));
        try {
            assertEquals(3, flusherThreads(three));
        } finally {
            three.close();
        }
        Target two = create(Map.of("backing", "b", "cache", "c", "flushers", "2"));
        try {
            assertEquals(2, flusherThreads(two));
        } finally {
            two.close();
        }
        Target one = create(Map.of("backing", "b", "cache", "c", "flushers", "1"));
        try {
            assertEquals(1, flusherThreads(one));
        } finally {
            one.close();
        }
    }

    @Test
    void outOfRangeIsRefusedWithOneLine() {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                () -> create(Map.of("backing", "b", "cache", "c", "flushers", "0")));
        assertTrue(e.getMessage().contains("flushers"), e.getMessage());
        assertTrue(!e.getMessage().contains("\n"), e.getMessage());
    }
}
