package dev.strata.cache.readcache.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.ReadCachePolicy;
import dev.strata.testsupport.crash.CrashableDevice;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** Live policy switches and a policy service going away and back, under concurrent verified reads and writes. */
class PolicySwitchTest {
    static final int BS = 4096;
    static final int THREADS = 4;
    static final int BLOCKS_PER_THREAD = 48;

    @Test
    void switchKeepsEveryCachedBlock() throws Exception {
        ReadCache rc = Opener.open("rc", new CrashableDevice("o", 1 << 20, BS), new CrashableDevice("c", 8192 + 128 * BS, BS),
                ReadCacheTest.lru());
        for (int b = 0; b < 100; b++) {
            ReadCacheTest.write(rc, b, 1);
        }
        rc.flush();
        for (int b = 0; b < 100; b++) {
            ReadCacheTest.read(rc, b);
        }
        long cached = rc.cachedBlocks();
        assertEquals(100, cached);
        for (String p : new String[] {"nhit", "wtinylfu", "lru"}) {
            rc.message("policy", p);
            assertEquals(cached, rc.cachedBlocks(), p);
            assertEquals(p, rc.status().get("policy"));
        }
        long hits = ReadCacheTest.stat(rc, "read_hits");
        for (int b = 0; b < 100; b++) {
            assertArrayEquals(ReadCacheTest.pattern(b, 1), ReadCacheTest.read(rc, b));
        }
        assertEquals(hits + 100, ReadCacheTest.stat(rc, "read_hits"), "every block is still a hit after the switches");
        rc.close();
    }

    @Test
    void switchesAndServiceUpdatesUnderVerifiedConcurrentIo() throws Exception {
        TestPolicies policies = TestPolicies.all();
        Opener.Options o = Opener.withTunables(Opener.withPolicy(Opener.options(policies), "lru"), 0, Map.of());
        ReadCache rc = Opener.open("rc", new CrashableDevice("o", 1 << 20, BS), new CrashableDevice("c", 8192 + 96 * BS, BS), o);
        AtomicBoolean stop = new AtomicBoolean();
        ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int id = t;
            threads.add(new Thread(() -> {
                Random r = new Random(id);
                int[] version = new int[BLOCKS_PER_THREAD];
                try {
                    for (int i = 0; i < 3000 && errors.isEmpty(); i++) {
                        int k = r.nextInt(BLOCKS_PER_THREAD);
                        long block = (long) k * THREADS + id; // interleaved: threads share metadata blocks and slots
                        if (r.nextInt(4) == 0) {
                            version[k]++;
                            ReadCacheTest.write(rc, block, version[k]);
                        } else {
                            byte[] got = ReadCacheTest.read(rc, block);
                            byte[] want = version[k] == 0 ? new byte[BS] : ReadCacheTest.pattern(block, version[k]);
                            if (!java.util.Arrays.equals(want, got)) {
                                errors.add("block " + block + " version " + version[k] + " read other data");
                            }
                        }
                        if (r.nextInt(50) == 0) {
                            rc.flush();
                        }
                    }
                } catch (Exception e) {
                    errors.add("thread " + id + ": " + e);
                }
            }));
        }
        threads.forEach(Thread::start);
        String[] names = {"nhit", "wtinylfu", "lru"};
        int switches = 0;
        while (threads.stream().anyMatch(Thread::isAlive)) {
            String n = names[switches % names.length];
            if (switches % 4 == 3) {
                // a bundle update: the bound service goes, promotion pauses, then it comes back
                ReadCachePolicy p = policies.map.get(rc.status().get("policy"));
                rc.policyGone(p);
                assertEquals("false", rc.status().get("policy_bound"));
                rc.policyArrived(rc.status().get("policy"), p);
                assertEquals("true", rc.status().get("policy_bound"));
            } else {
                rc.message("policy", n);
            }
            switches++;
        }
        for (Thread t : threads) {
            t.join();
        }
        assertTrue(errors.isEmpty(), errors.toString());
        assertTrue(switches >= 3, "switches: " + switches);
        assertTrue(ReadCacheTest.stat(rc, "read_hits") > 0);
        rc.close();
    }
}
