package dev.strata.daemons.internal.pi;

import dev.strata.daemons.internal.Tunable;
import java.util.List;

/**
 * The {@code pi} controller's tunables, named and defaulted as bcache's sysfs files are
 * ({@code writeback_percent}, {@code writeback_rate_*}; Documentation/admin-guide/bcache.rst),
 * without the {@code writeback_rate_} prefix where the issue names them short. Rates are in
 * 512-byte sectors per second, as in bcache.
 */
final class PiTunables {
    static final String NAME = "pi";

    static final Tunable WRITEBACK_PERCENT = new Tunable(NAME, "writeback_percent", 0, 100, 10,
            "percent of the cache that may stay dirty; 0 writes back at full speed");
    static final Tunable P_TERM_INVERSE = new Tunable(NAME, "p_term_inverse", 1, 1_000_000, 40,
            "proportional term: the excess dirty data is written back in about this many seconds");
    static final Tunable I_TERM_INVERSE = new Tunable(NAME, "i_term_inverse", 1, 1_000_000_000, 10_000,
            "integral term: 1/this of the accumulated error, in sectors per second");
    static final Tunable UPDATE_SECONDS = new Tunable(NAME, "update_seconds", 1, 60, 5,
            "seconds between rate updates");
    static final Tunable RATE_MINIMUM = new Tunable(NAME, "rate_minimum", 1, 1_000_000_000, 8,
            "lowest writeback rate in 512-byte sectors per second");
    static final Tunable RATE_MAXIMUM = new Tunable(NAME, "rate_maximum", 1, 1_000_000_000, 1_000_000_000,
            "highest writeback rate in 512-byte sectors per second");
    static final Tunable CONSIDER_FRAGMENT = Tunable.flag(NAME, "consider_fragment", true,
            "raise the rate when little dirty data pins much cache space (bcache 2021)");
    static final Tunable FP_TERM_LOW = new Tunable(NAME, "fp_term_low", 1, 1_000_000, 1,
            "fragmentation term per point of space in use above 50 percent");
    static final Tunable FP_TERM_MID = new Tunable(NAME, "fp_term_mid", 1, 1_000_000, 10,
            "fragmentation term per point of space in use above 57 percent");
    static final Tunable FP_TERM_HIGH = new Tunable(NAME, "fp_term_high", 1, 1_000_000, 1000,
            "fragmentation term per point of space in use above 64 percent");

    static final List<Tunable> ALL = List.of(WRITEBACK_PERCENT, P_TERM_INVERSE, I_TERM_INVERSE, UPDATE_SECONDS,
            RATE_MINIMUM, RATE_MAXIMUM, CONSIDER_FRAGMENT, FP_TERM_LOW, FP_TERM_MID, FP_TERM_HIGH);

    private PiTunables() {
    }
}
