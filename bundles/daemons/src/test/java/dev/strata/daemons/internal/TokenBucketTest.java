package dev.strata.daemons.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The bucket's spacing against hand-computed grants, with made-up times. */
class TokenBucketTest {
    private static final long MS = 1_000_000L;
    private static final long T0 = 7_000_000_000L; // any origin: the bucket keeps no clock

    @Test
    void grantsAQuantumThenSpacesTheNextGrantByItsCost() {
        TokenBucket b = new TokenBucket();
        // 1000 blocks/s: a quantum (100 ms) is 100 blocks and costs 100 ms
        assertEquals(100, b.take(T0, 1000, 10_000));
        assertEquals(100 * MS, b.waitNanos(T0));
        assertEquals(0, b.take(T0 + 50 * MS, 1000, 10_000), "too early: nothing");
        assertEquals(50 * MS, b.waitNanos(T0 + 50 * MS));
        assertEquals(100, b.take(T0 + 100 * MS, 1000, 10_000), "on time: the next quantum");
        assertEquals(-100 * MS, b.behindNanos(T0 + 100 * MS));
    }

    @Test
    void aLateCallerGetsWhatIsDueNotMore() {
        TokenBucket b = new TokenBucket();
        b.take(T0, 1000, 10_000); // next = T0 + 100 ms
        assertEquals(250 * MS, b.behindNanos(T0 + 350 * MS));
        assertEquals(250, b.take(T0 + 350 * MS, 1000, 10_000), "250 ms late at 1000/s");
        assertEquals(0, b.waitNanos(T0 + 350 * MS));
        assertEquals(0, b.behindNanos(T0 + 350 * MS));
    }

    @Test
    void aStalledCallerBanksAtMostTwoSeconds() {
        TokenBucket b = new TokenBucket();
        b.take(T0, 1000, 10_000);
        assertEquals(2000, b.take(T0 + 10_000 * MS, 1000, 10_000), "bcache: never more than 2 s behind");
    }

    @Test
    void theLimitCapsAGrantAndOnlyTheGrantIsCharged() {
        TokenBucket b = new TokenBucket();
        assertEquals(30, b.take(T0, 1000, 30));
        assertEquals(30 * MS, b.waitNanos(T0), "30 blocks cost 30 ms");
    }

    @Test
    void oneBlockAtATinyRateWaitsAtMostTwoAndAHalfSeconds() {
        TokenBucket b = new TokenBucket();
        // 8 sectors/s with 64 KiB blocks: 1/16 block per second
        assertEquals(1, b.take(T0, 8 * 512.0 / 65536, 10));
        assertEquals(2_500 * MS, b.waitNanos(T0), "bcache: never sleep more than 2.5 s");
    }

    @Test
    void resetForgetsTheBacklog() {
        TokenBucket b = new TokenBucket();
        b.take(T0, 1000, 10_000);
        b.reset(T0 + 5_000 * MS);
        assertEquals(100, b.take(T0 + 5_000 * MS, 1000, 10_000));
    }

    @Test
    void aPromptCallerIsHeldToTheRateOverALongRun() {
        TokenBucket b = new TokenBucket();
        long granted = 0;
        long t = T0;
        long end = T0 + 10_000 * MS;
        while (t < end) {
            int g = b.take(t, 1234, 1_000_000);
            granted += g;
            long w = b.waitNanos(t);
            t += Math.max(MS, w);
        }
        // 10 s at 1234/s, plus the first quantum granted in advance
        assertEquals(12_340 + 123, granted, 124);
    }

    @Test
    void writtenBeyondTheGrantIsChargedUncappedAndRescaledWhenTheRateChanges() {
        TokenBucket b = new TokenBucket();
        // 10 blocks/s: a quantum is 1 block (100 ms); the cache wrote a whole 255-block segment
        assertEquals(1, b.take(T0, 10, 10_000));
        b.charge(254, 10);
        assertEquals(25_500 * MS, b.behindNanos(T0) * -1, "255 blocks at 10/s: 25.5 s, not bcache's 2.5 s cap");
        assertEquals(TokenBucket.MAX_AHEAD_NANOS, b.waitNanos(T0), "the cache is still told to ask within 2.5 s");
        assertEquals(0, b.take(T0 + 2_500 * MS, 10, 10_000), "still in debt at 10/s");
        // the rate goes up to 100 blocks/s: the 230 blocks still owed now take 2.3 s, not 23 s
        assertEquals(0, b.take(T0 + 2_500 * MS, 100, 10_000));
        assertEquals(2_300 * MS, b.waitNanos(T0 + 2_500 * MS));
        assertEquals(10, b.take(T0 + 4_800 * MS, 100, 10_000), "debt paid: a quantum at 100/s");
        // fewer written than granted: the rest is given back
        TokenBucket c = new TokenBucket();
        assertEquals(100, c.take(T0, 1000, 10_000));
        c.charge(-60, 1000);
        assertEquals(40 * MS, c.waitNanos(T0));
    }
}
