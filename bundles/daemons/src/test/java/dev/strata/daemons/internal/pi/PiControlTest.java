package dev.strata.daemons.internal.pi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.daemons.internal.Settings;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * bcache's rate arithmetic against hand-computed cases. Defaults: target 10 %, P = error / 40,
 * integral += error × 5 per update, I = integral / 10000, rate within [8, 10^9] sectors/s.
 * A cache of 1 000 000 sectors has a target of 100 000 sectors.
 */
class PiControlTest {
    private static final long CAPACITY = 1_000_000;
    private static final Settings DEFAULTS = Settings.of(PiTunables.ALL, Map.of());

    @Test
    void stepAboveTargetGivesPThenTheIntegralAddsUp() {
        PiControl c = new PiControl();
        // dirty 140 000: error 40 000, P = 1000; integral 40 000 × 5 = 200 000, I = 20
        assertEquals(1020, c.update(DEFAULTS, 140_000, CAPACITY, true, null));
        assertEquals(100_000, c.target());
        assertEquals(40_000, c.error());
        assertEquals(1000, c.proportional());
        assertEquals(200_000, c.integral());
        assertEquals(20, c.integralScaled());
        // the same error again: integral 400 000, I = 40
        assertEquals(1040, c.update(DEFAULTS, 140_000, CAPACITY, true, null));
        // and a third: 600 000, I = 60
        assertEquals(1060, c.update(DEFAULTS, 140_000, CAPACITY, true, null));
    }

    @Test
    void belowTargetTheRateIsTheMinimumAndAZeroIntegralStaysZero() {
        PiControl c = new PiControl();
        // error −50 000: P = −1250, clamped up to rate_minimum 8; integral 0 is not wound below 0
        assertEquals(8, c.update(DEFAULTS, 50_000, CAPACITY, true, null));
        assertEquals(-1250, c.proportional());
        assertEquals(0, c.integral());
        assertFalse(c.integrated());
    }

    @Test
    void theIntegralWindsDownOnlyWhilePositiveAndMayStepBelowZeroOnce() {
        PiControl c = new PiControl();
        c.update(DEFAULTS, 140_000, CAPACITY, true, null); // integral 200 000
        c.update(DEFAULTS, 110_000, CAPACITY, true, null); // error 10 000: +50 000 → 250 000
        assertEquals(250_000, c.integral());
        // error −40 000: −200 000 → 50 000; P = −1000, I = 5: rate clamps to 8
        assertEquals(8, c.update(DEFAULTS, 60_000, CAPACITY, true, null));
        assertEquals(50_000, c.integral());
        // still positive, so integrate once more: 50 000 − 200 000 = −150 000 (as bcache does)
        c.update(DEFAULTS, 60_000, CAPACITY, true, null);
        assertEquals(-150_000, c.integral());
        // negative now: it stays, even though the error is still negative
        c.update(DEFAULTS, 60_000, CAPACITY, true, null);
        assertEquals(-150_000, c.integral());
        assertFalse(c.integrated());
        // above target again, the negative integral holds the rate back: P 1000 + I (−150 000 + 200 000)/10000 = 1005
        assertEquals(1005, c.update(DEFAULTS, 140_000, CAPACITY, true, null));
    }

    @Test
    void antiWindupNoIntegrationWhileTheWriterIsNotKeepingUp() {
        PiControl c = new PiControl();
        for (int i = 0; i < 10; i++) {
            assertEquals(1000, c.update(DEFAULTS, 140_000, CAPACITY, false, null));
        }
        assertEquals(0, c.integral(), "a backing device that cannot keep up does not wind the integral up");
        // once it keeps up, integration starts from zero, not from ten updates of error
        assertEquals(1020, c.update(DEFAULTS, 140_000, CAPACITY, true, null));
    }

    @Test
    void antiWindupNoIntegrationPastTheUpperClamp() {
        Settings s = DEFAULTS.with("rate_maximum", "1500");
        PiControl c = new PiControl();
        for (int i = 0; i < 40; i++) {
            c.update(s, 140_000, CAPACITY, true, null);
        }
        // P = 1000: integration stops once 1000 + integral/10000 reaches 1500, i.e. at 5 000 000
        assertEquals(5_000_000, c.integral());
        assertEquals(1500, c.rate());
        assertFalse(c.integrated());
        // P alone past the clamp: no integration from the start
        PiControl d = new PiControl();
        assertEquals(1500, d.update(s, 200_000, CAPACITY, true, null)); // P = 2500
        assertEquals(0, d.integral());
    }

    @Test
    void clampAtTheMinimumAndTruncationTowardZero() {
        Settings s = DEFAULTS.with("rate_minimum", "100");
        PiControl c = new PiControl();
        // error 79: P = 1 (79/40 truncated), integral 395, I = 0: 1 is below the minimum 100
        assertEquals(100, c.update(s, 100_079, CAPACITY, true, null));
        assertEquals(1, c.proportional());
        // error −79: P = −1, not −2 (div_s64 truncates toward zero)
        PiControl d = new PiControl();
        d.update(s, 99_921, CAPACITY, true, null);
        assertEquals(-1, d.proportional());
    }

    @Test
    void tunablesChangeTheTermsAsDocumented() {
        Settings s = DEFAULTS.with("writeback_percent", "20").with("p_term_inverse", "10")
                .with("i_term_inverse", "1000").with("update_seconds", "2");
        PiControl c = new PiControl();
        // target 200 000; error 40 000: P = 4000; integral 80 000, I = 80
        assertEquals(4080, c.update(s, 240_000, CAPACITY, true, null));
    }

    @Test
    void fragmentationTermReplacesPWhenLittleDirtyDataPinsMuchSpace() {
        PiControl c = new PiControl();
        // 20 000 dirty sectors (below target: P = −2000) pinning 60 % of the cache in 512 KiB units:
        // used units 600 000 / 1024 = 585; fragment = 585 × 1024 / 20 000 = 29 > 3;
        // in use 60 % is the middle stage: fp_term = 10 × (60 − 57) = 30;
        // term = (20 000 / 585) × 30 = 34 × 30 = 1020
        PiControl.Fragmentation f = new PiControl.Fragmentation(60, 585, 1024);
        assertEquals(1020, c.update(DEFAULTS, 20_000, CAPACITY, true, f));
        assertEquals(1020, c.fragmentTerm());
        assertEquals(1020, c.proportional());
        assertEquals(0, c.integral(), "the error is still negative: no integration");
    }

    @Test
    void fragmentationStages() {
        // low stage, 55 %: fp_term = 1 × 5; high stage, 70 %: 1000 × 6
        assertEquals(34 * 5, PiControl.fragmentTerm(DEFAULTS, 20_000, new PiControl.Fragmentation(55, 585, 1024)));
        assertEquals(34 * 6000, PiControl.fragmentTerm(DEFAULTS, 20_000, new PiControl.Fragmentation(70, 585, 1024)));
        // at most 50 % in use, or used space at most 3 × the dirty data, or not reported: off
        assertEquals(-1, PiControl.fragmentTerm(DEFAULTS, 20_000, new PiControl.Fragmentation(50, 585, 1024)));
        assertEquals(-1, PiControl.fragmentTerm(DEFAULTS, 200_000, new PiControl.Fragmentation(60, 585, 1024)));
        assertEquals(-1, PiControl.fragmentTerm(DEFAULTS, 20_000, null));
    }

    @Test
    void fragmentationCanBeSwitchedOff() {
        PiControl c = new PiControl();
        Settings off = DEFAULTS.with("consider_fragment", "false");
        assertEquals(8, c.update(off, 20_000, CAPACITY, true, new PiControl.Fragmentation(60, 585, 1024)));
        assertEquals(-1, c.fragmentTerm());
        assertTrue(c.proportional() < 0);
    }
}
