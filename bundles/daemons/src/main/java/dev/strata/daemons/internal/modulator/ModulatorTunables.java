package dev.strata.daemons.internal.modulator;

import dev.strata.daemons.internal.Tunable;
import java.util.List;

/** The {@code modulator}'s one tunable, named and defaulted as dm-writeboost's. */
final class ModulatorTunables {
    static final String NAME = "modulator";

    /** dm-writeboost: writeback_threshold, default 70 (0 turns background writeback off). */
    static final Tunable WRITEBACK_THRESHOLD = new Tunable(NAME, "writeback_threshold", 0, 100, 70,
            "percent of the backing device's busy time below which writeback runs; 0 turns it off");

    static final List<Tunable> ALL = List.of(WRITEBACK_THRESHOLD);

    private ModulatorTunables() {
    }
}
