package dev.strata.cache.commands.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.strata.api.InvalidArgumentException;
import dev.strata.core.internal.DeviceDefinition;

/**
 * A readcache switched to a policy that is not installed: {@code cache:set DEV policy bogus} and a
 * fresh {@code dev:create … policy=bogus} refuse it in one line, but {@code cache:switch DEV
 * readcache policy=bogus} (and a {@code dev:reload} so) answered "switched …, cached data kept" and left promotion paused with
 * nothing on the console saying why (a typo looked like success).
 */
class PolicySwitchTest {
    static final long MIB = 1L << 20;
    LiveStack s;

    @BeforeEach
    void start() throws Exception {
        s = new LiveStack();
        s.disk("slow", 8 * MIB);
        s.disk("ssd", 17 * MIB);
    }

    @AfterEach
    void stop() {
        s.close();
    }

    @Test
    void aSwitchToAPolicyThatIsNotInstalledIsRefusedAndChangesNothing() throws Exception {
        s.run("cache:attach slow readcache cache=ssd policy=lru");
        Map<String, DeviceDefinition> stored = s.store.snapshot();
        String e = s.error("cache:switch slow readcache policy=bogus");
        assertTrue(e.contains("no policy 'bogus' is installed") && e.contains("lru"), e);
        assertEquals("lru", s.manager.status("slow").get("policy"));
        assertEquals("true", s.manager.status("slow").get("policy_bound"));
        assertEquals(stored, s.store.snapshot(), "nothing stored");
        Map<String, String> reload = Map.of("origin", "slow.crash", "cache", "ssd", "policy", "bogus");
        e = assertThrows(InvalidArgumentException.class, () -> s.manager.reload("slow", "readcache", reload)).getMessage();
        assertTrue(e.contains("no policy 'bogus' is installed"), e);
        assertEquals(stored, s.store.snapshot(), "nothing stored");
        assertEquals("lru", s.manager.status("slow").get("policy"));
        // an installed one still switches, keeping the cached blocks
        assertTrue(s.run("cache:switch slow readcache policy=nhit").contains("cached data kept"));
        assertEquals("nhit", s.manager.status("slow").get("policy"));
    }
}
