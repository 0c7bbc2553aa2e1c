package dev.strata.daemons.internal.pi;

import static dev.strata.daemons.internal.pi.PiTunables.CONSIDER_FRAGMENT;
import static dev.strata.daemons.internal.pi.PiTunables.FP_TERM_HIGH;
import static dev.strata.daemons.internal.pi.PiTunables.FP_TERM_LOW;
import static dev.strata.daemons.internal.pi.PiTunables.FP_TERM_MID;
import static dev.strata.daemons.internal.pi.PiTunables.I_TERM_INVERSE;
import static dev.strata.daemons.internal.pi.PiTunables.P_TERM_INVERSE;
import static dev.strata.daemons.internal.pi.PiTunables.RATE_MAXIMUM;
import static dev.strata.daemons.internal.pi.PiTunables.RATE_MINIMUM;
import static dev.strata.daemons.internal.pi.PiTunables.UPDATE_SECONDS;
import static dev.strata.daemons.internal.pi.PiTunables.WRITEBACK_PERCENT;

import dev.strata.daemons.internal.Settings;

/**
 * The arithmetic of bcache's writeback rate controller, {@code __update_writeback_rate} in
 * drivers/md/bcache/writeback.c (PI since Michael Lyle's 2017 rewrite, fragmentation term from
 * Dongdong Tao's 2021 patch), in bcache's units: sectors of 512 bytes, sectors per second, and
 * integer division that truncates toward zero as {@code div_s64} does. One instance per cache:
 * it holds that cache's integral. No time and no I/O here: the session decides when an update is
 * due and whether the writer is keeping up.
 * <p>
 * One update:
 * <pre>
 *   target       = capacity × writeback_percent / 100
 *   error        = dirty − target
 *   P            = error / p_term_inverse                (sectors/s)
 *   P            = max(P, fragmentation term)            (if it applies, see below)
 *   integrate if   error &lt; 0 and integral &gt; 0            (only wind down while positive)
 *             or   error &gt; 0 and the writer keeps up      (bcache's anti-windup rule)
 *                  and P + integral / i_term_inverse &lt; rate_maximum   (not past the clamp)
 *     integral  += error × update_seconds
 *   I            = integral / i_term_inverse
 *   rate         = clamp(P + I, rate_minimum, rate_maximum)
 * </pre>
 * The fragmentation term applies when the cache reports its {@link Fragmentation occupancy}
 * and more than 50 % of its space is held by units with dirty data: with
 * {@code fragment = used sectors / dirty sectors} above 3 it replaces P when larger by
 * {@code (dirty sectors / used units) × fp_term}, where {@code fp_term} is
 * {@code fp_term_low × (in_use − 50)} up to 57 %, {@code fp_term_mid × (in_use − 57)} up to 64 %
 * and {@code fp_term_high × (in_use − 64)} above: an average unit's dirty data written back in
 * 1 / fp_term seconds.
 */
final class PiControl {
    static final int FRAGMENT_LOW = 50;
    static final int FRAGMENT_MID = 57;
    static final int FRAGMENT_HIGH = 64;

    /** What the cache's dirty data pins, in the terms bcache's fragmentation term uses. */
    record Fragmentation(long inUsePercent, long usedUnits, long unitSectors) {
    }

    private long integral;

    // the last update, for status lines
    private long target;
    private long error;
    private long proportional;
    private long fragmentTerm = -1;
    private long integralScaled;
    private long rate;
    private boolean integrated;

    /**
     * Computes the new rate.
     *
     * @param s               the cache's tunables
     * @param dirtySectors    dirty data now
     * @param capacitySectors the cache's size
     * @param keepingUp       whether the writer kept pace with the current rate (bcache: the
     *                        rate limiter was not behind by more than its slack)
     * @param frag            occupancy, or null if the cache does not report it
     * @return the rate in sectors per second, within [rate_minimum, rate_maximum]
     */
    long update(Settings s, long dirtySectors, long capacitySectors, boolean keepingUp, Fragmentation frag) {
        long min = s.get(RATE_MINIMUM);
        long max = Math.max(min, s.get(RATE_MAXIMUM));
        long iInv = s.get(I_TERM_INVERSE);
        target = capacitySectors / 100 * s.get(WRITEBACK_PERCENT) + capacitySectors % 100 * s.get(WRITEBACK_PERCENT) / 100;
        error = dirtySectors - target;
        proportional = error / s.get(P_TERM_INVERSE);
        fragmentTerm = s.flag(CONSIDER_FRAGMENT) ? fragmentTerm(s, dirtySectors, frag) : -1;
        if (fragmentTerm >= 0 && fragmentTerm > proportional) {
            proportional = fragmentTerm;
        }
        integrated = (error < 0 && integral > 0)
                || (error > 0 && keepingUp && proportional + integral / iInv < max);
        if (integrated) {
            integral = Math.addExact(integral, Math.multiplyExact(error, s.get(UPDATE_SECONDS)));
        }
        integralScaled = integral / iInv;
        rate = Math.max(min, Math.min(max, proportional + integralScaled));
        return rate;
    }

    /**
     * bcache's fragmentation term, or -1 where it does not apply (no occupancy reported, 50 %
     * or less in use, nothing dirty, or used space at most 3 × the dirty data).
     */
    static long fragmentTerm(Settings s, long dirtySectors, Fragmentation f) {
        if (f == null || f.inUsePercent() <= FRAGMENT_LOW || dirtySectors <= 0 || f.usedUnits() <= 0) {
            return -1;
        }
        long fragment = f.usedUnits() * f.unitSectors() / dirtySectors;
        if (fragment <= 3) {
            return -1;
        }
        long in = f.inUsePercent();
        long fpTerm;
        if (in <= FRAGMENT_MID) {
            fpTerm = s.get(FP_TERM_LOW) * (in - FRAGMENT_LOW);
        } else if (in <= FRAGMENT_HIGH) {
            fpTerm = s.get(FP_TERM_MID) * (in - FRAGMENT_MID);
        } else {
            fpTerm = s.get(FP_TERM_HIGH) * (in - FRAGMENT_HIGH);
        }
        return dirtySectors / f.usedUnits() * fpTerm;
    }

    long integral() {
        return integral;
    }

    long target() {
        return target;
    }

    long error() {
        return error;
    }

    long proportional() {
        return proportional;
    }

    long fragmentTerm() {
        return fragmentTerm;
    }

    long integralScaled() {
        return integralScaled;
    }

    long rate() {
        return rate;
    }

    boolean integrated() {
        return integrated;
    }
}
