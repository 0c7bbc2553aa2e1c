package dev.strata.readcache.policies.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.ReadCachePolicy;
import dev.strata.api.ReadCachePolicy.Contents;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What every shipped policy must keep, whatever the sequence of hits, misses, pending
 * promotions, abandoned promotions and invalidations ({@link Driver} checks each handed-out slot):
 * and a live switch between any two policies keeps every cached block.
 */
class PolicyContractTest {

    static Stream<Arguments> policies() {
        return Stream.of(
                Arguments.of("lru", new LruPolicy(), Map.of()),
                Arguments.of("nhit", new NHitPolicy(), Map.of()),
                Arguments.of("wtinylfu", new WTinyLfuPolicy(), Map.of()),
                Arguments.of("wtinylfu window=0", new WTinyLfuPolicy(), Map.of("window", "0")),
                Arguments.of("wtinylfu window=30 climb", new WTinyLfuPolicy(), Map.of("window", "30", "climb", "true")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("policies")
    void randomOperationsKeepTheSlotRules(String name, ReadCachePolicy policy, Map<String, String> tunables) {
        for (int slots : new int[] {1, 2, 7, 64}) {
            Random r = new Random(slots * 31L + name.hashCode());
            Driver d = new Driver(policy, slots, tunables);
            List<Integer> inFlight = new ArrayList<>();
            Set<Long> pendingKeys = new HashSet<>();
            for (int i = 0; i < 20_000; i++) {
                long key = r.nextInt(4) == 0 ? r.nextInt(slots * 8 + 1) : r.nextInt(slots + 1);
                int op = r.nextInt(10);
                if (op < 6) {
                    if (!pendingKeys.contains(key)) {
                        d.access(key);
                    }
                } else if (op < 8 && !d.cached(key) && !pendingKeys.contains(key)) {
                    int s = d.begin(key);
                    if (s != -1) {
                        inFlight.add(s);
                        pendingKeys.add(key);
                    }
                } else if (op == 8 && !inFlight.isEmpty()) {
                    int s = inFlight.remove(r.nextInt(inFlight.size()));
                    pendingKeys.remove(d.keys[s]);
                    if (r.nextBoolean()) {
                        d.complete(s);
                    } else {
                        d.abandon(s);
                    }
                } else {
                    d.invalidate(key);
                }
            }
            assertEquals(d.index.size() + inFlight.size(), countOccupied(d.keys));
            assertTrue(d.policy.heapBytes() > 0);
        }
    }

    static Stream<Arguments> switches() {
        List<Arguments> all = new ArrayList<>();
        List<Arguments> ps = policies().toList();
        for (Arguments from : ps) {
            for (Arguments to : ps) {
                all.add(Arguments.of(from.get()[0] + " -> " + to.get()[0], from.get()[1], from.get()[2], to.get()[1], to.get()[2]));
            }
        }
        return all.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("switches")
    @SuppressWarnings("unchecked")
    void aLiveSwitchKeepsEveryCachedBlock(String name, ReadCachePolicy from, Map<?, ?> fromTunables, ReadCachePolicy to,
            Map<?, ?> toTunables) {
        Random r = new Random(name.hashCode());
        Driver d = new Driver(from, 50, (Map<String, String>) fromTunables);
        for (int i = 0; i < 5000; i++) {
            d.access(r.nextInt(120));
            if (i % 97 == 0) {
                d.invalidate(r.nextInt(120));
            }
        }
        long[] before = d.keys.clone();
        int free = 50 - countOccupied(before);
        d.switchTo(to, (Map<String, String>) toTunables);
        for (int s = 0; s < before.length; s++) {
            assertEquals(before[s], d.keys[s], "a switch changes no slot");
        }
        // Every cached block still hits (a policy that forgot one would fail the hit call or,
        // later, hand its slot out as free while the Driver sees it occupied).
        for (int s = 0; s < before.length; s++) {
            if (before[s] != Contents.EMPTY) {
                assertTrue(d.access(before[s]));
            }
        }
        // The free slots are used first: no cached block is evicted while one is free.
        for (int i = 0; i < free; i++) {
            d.access(10_000 + i);
        }
        for (int s = 0; s < before.length; s++) {
            if (before[s] != Contents.EMPTY) {
                assertTrue(d.cached(before[s]), "block " + before[s] + " survived the switch and the refill");
            }
        }
        for (int i = 0; i < 5000; i++) {
            d.access(r.nextInt(120));
        }
    }

    private static int countOccupied(long[] keys) {
        int n = 0;
        for (long k : keys) {
            n += k == Contents.EMPTY ? 0 : 1;
        }
        return n;
    }
}
