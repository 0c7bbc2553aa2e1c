package dev.strata.cache.support.guard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class GuardTest {
    @Test
    void aTouchAfterTheSnapshotMakesTheCopyStale() {
        TouchStamps t = new TouchStamps(10);
        t.touch(7); // before the reader's snapshot: the reader saw it
        long snap = t.snapshot();
        assertFalse(t.stale(7, snap));
        assertFalse(t.stale(8, snap));
        t.touch(8);
        assertTrue(t.stale(8, snap));
        assertFalse(t.stale(7, snap));
    }

    @Test
    void aLargeRangeTouchesEverything() {
        TouchStamps t = new TouchStamps(4);
        long snap = t.snapshot();
        t.touchRange(100, 104);
        assertTrue(t.stale(101, snap));
        long snap2 = t.snapshot();
        t.touchRange(0, 1000); // more than 2^4 blocks: the global stamp
        assertTrue(t.stale(5_000_000, snap2));
        assertFalse(t.stale(5_000_000, t.snapshot()));
        t.touchRange(5, 5); // empty: nothing
        assertFalse(t.stale(1, t.snapshot()));
    }

    @Test
    void sequentialRunsFollowInterleavedStreams() {
        SequentialRuns r = new SequentialRuns();
        assertEquals(4096, r.extend(0, 4096));
        assertEquals(4096, r.extend(1 << 20, 4096));
        assertEquals(8192, r.extend(4096, 4096));
        assertEquals(8192, r.extend((1 << 20) + 4096, 4096));
        assertEquals(4096, r.extend(1 << 30, 4096), "a jump starts a new run");
        assertEquals(12288, r.extend(8192, 4096));
    }
}
