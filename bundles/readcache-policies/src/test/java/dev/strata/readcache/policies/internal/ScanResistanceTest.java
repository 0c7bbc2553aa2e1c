package dev.strata.readcache.policies.internal;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.ReadCachePolicy;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * DESIGN.md §6.3 / issue 12, performance 3: a one-pass scan of 4 × the cache size between two
 * runs of a hot working set leaves the hot set's hit ratio within 5 points.
 */
class ScanResistanceTest {
    private static final int SLOTS = 2000;
    private static final int HOT = 1500;
    private static final int RUN = 10 * HOT;

    /** Hot-set hit ratio before and after the scan. */
    private static double[] hotRatios(ReadCachePolicy policy, Map<String, String> tunables) {
        Driver d = new Driver(policy, SLOTS, tunables);
        Random r = new Random(12);
        for (int i = 0; i < RUN; i++) { // warm-up, not measured
            d.access(r.nextInt(HOT));
        }
        d.resetCounts();
        for (int i = 0; i < RUN; i++) {
            d.access(r.nextInt(HOT));
        }
        double before = d.hitPercent();
        for (long k = 0; k < 4L * SLOTS; k++) {
            d.access(1_000_000 + k); // the scan: every block once
        }
        d.resetCounts();
        for (int i = 0; i < RUN; i++) {
            d.access(r.nextInt(HOT));
        }
        System.out.printf("%s %s: hot set %.2f %% before the scan, %.2f %% after%n", policy.getClass().getSimpleName(),
                tunables, before, d.hitPercent());
        return new double[] {before, d.hitPercent()};
    }

    @Test
    void wTinyLfuKeepsTheHotSetThroughAScan() {
        double[] h = hotRatios(new WTinyLfuPolicy(), Map.of());
        assertTrue(h[0] > 95, "the hot set fits: " + h[0]);
        assertTrue(h[0] - h[1] <= 5, "hot hit ratio " + h[0] + " % before the scan, " + h[1] + " % after");
    }

    @Test
    void wTinyLfuWithClimbingKeepsTheHotSetThroughAScan() {
        double[] h = hotRatios(new WTinyLfuPolicy(), Map.of("climb", "true"));
        assertTrue(h[0] - h[1] <= 5, "hot hit ratio " + h[0] + " % before the scan, " + h[1] + " % after");
    }

    @Test
    void nHitKeepsTheHotSetThroughAScan() {
        double[] h = hotRatios(new NHitPolicy(), Map.of());
        assertTrue(h[0] - h[1] <= 5, "hot hit ratio " + h[0] + " % before the scan, " + h[1] + " % after");
    }

    @Test
    void lruDoesNotWhichIsWhatTheMeasureShows() {
        double[] h = hotRatios(new LruPolicy(), Map.of());
        assertTrue(h[0] > 95);
        assertTrue(h[0] - h[1] > 5, "LRU loses the hot set to the scan: " + h[0] + " → " + h[1]);
    }
}
