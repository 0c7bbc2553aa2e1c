package dev.strata.cache.writeboost.internal.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CacheMapTest {

    /**
     * Against a model; with the default fingerprint (19 bits here) and with 0, 1 and 2 bits, so
     * that fingerprints collide all the time and the owner comparison must sort them out.
     */
    @ParameterizedTest
    @ValueSource(ints = {31, 0, 1, 2})
    void behavesLikeAMapUnderRandomOperations(int fingerprintBits) {
        int locations = 4096;
        CacheMap m = new CacheMap(locations, locations, fingerprintBits);
        Map<Long, Integer> model = new HashMap<>();
        Map<Integer, Long> owners = new HashMap<>();
        Random r = new Random(42);
        int nextLoc = 0;
        for (int op = 0; op < 200_000; op++) {
            long key = r.nextInt(6000);
            int what = r.nextInt(10);
            if (what < 6) {
                // put into a fresh location (recycle the location space like the log does)
                int loc = nextLoc;
                nextLoc = (nextLoc + 1) % locations;
                Long prevOwner = owners.remove(loc);
                if (prevOwner != null) {
                    m.removeLocation(loc);
                    model.remove(prevOwner);
                }
                int old = m.put(key, loc, 0xFF, false);
                Integer expectOld = model.put(key, loc);
                assertEquals(expectOld == null ? -1 : expectOld, old);
                if (expectOld != null) {
                    owners.remove(expectOld);
                    assertEquals(-1, m.owner(expectOld));
                }
                owners.put(loc, key);
            } else if (what < 8) {
                int old = m.remove(key);
                Integer expectOld = model.remove(key);
                assertEquals(expectOld == null ? -1 : expectOld, old);
                if (expectOld != null) {
                    owners.remove(expectOld);
                }
            } else {
                Integer expect = model.get(key);
                assertEquals(expect == null ? -1 : expect, m.get(key));
            }
            if (op % 10_000 == 0) {
                for (Map.Entry<Long, Integer> e : model.entrySet()) {
                    assertEquals(e.getValue(), m.get(e.getKey()));
                    assertEquals(e.getKey(), m.owner(e.getValue()));
                }
                assertEquals(model.size(), m.size());
            }
        }
    }

    @Test
    void validAndCleanBits() {
        CacheMap m = new CacheMap(256, 255);
        m.put(7, 130, 0x0F, true);
        assertTrue(m.clean(130));
        assertEquals(0x0F, m.valid(130));
        m.setClean(130, false);
        m.setValid(130, 0xFF);
        assertEquals(0xFF, m.valid(130));
        assertTrue(!m.clean(130));
        m.put(7, 131, 0x01, false);
        assertEquals(0, m.valid(130));
        assertEquals(-1, m.owner(130));
        assertEquals(131, m.get(7));
    }

    @Test
    void heapPerCachedBlockIsUnderTwentyBytes() {
        int segments = 4096; // a 4 GiB cache
        int locations = segments * 256;
        CacheMap m = new CacheMap(locations, segments * 255);
        double perBlock = (double) m.heapBytes() / (segments * 255);
        assertTrue(perBlock <= 20, "heap bytes per cached block: " + perBlock);
    }

    /** A full table (load 0.8) of a non-power-of-two size: every block found, removals keep the rest findable. */
    @Test
    void fullTableWithRemovals() {
        int locations = 3 * 256 * 7;
        int max = 3 * 255 * 7;
        CacheMap m = new CacheMap(locations, max);
        Random r = new Random(7);
        Map<Long, Integer> model = new HashMap<>();
        int loc = 0;
        while (model.size() < max) {
            long key = r.nextLong() & Long.MAX_VALUE;
            if (model.containsKey(key)) {
                continue;
            }
            m.put(key, loc, 0xFF, false);
            model.put(key, loc);
            loc++;
        }
        for (Map.Entry<Long, Integer> e : model.entrySet()) {
            assertEquals(e.getValue(), m.get(e.getKey()));
        }
        int removed = 0;
        for (var it = model.entrySet().iterator(); it.hasNext();) {
            Map.Entry<Long, Integer> e = it.next();
            if (removed++ % 3 == 0) {
                assertEquals(e.getValue(), m.remove(e.getKey()));
                it.remove();
            }
        }
        for (Map.Entry<Long, Integer> e : model.entrySet()) {
            assertEquals(e.getValue(), m.get(e.getKey()));
        }
        assertEquals(model.size(), m.size());
    }
}
