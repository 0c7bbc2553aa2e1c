package dev.strata.daemons.internal.idle;

import dev.strata.daemons.internal.Tunable;
import java.util.List;

/** The {@code idle} controller's tunables. */
final class IdleTunables {
    static final String NAME = "idle";

    /** dm-writecache's pause_writeback defaults to 3000 ms ("it performed better" than 1 s). */
    static final Tunable IDLE_MS = new Tunable(NAME, "idle_ms", 0, 3_600_000, 3000,
            "milliseconds without foreground requests after which writeback runs at full speed");
    /** Low enough that a spindle's random foreground I/O keeps nearly all of its seeks. */
    static final Tunable BUSY_KIB_PER_SEC = new Tunable(NAME, "busy_kib_per_sec", 0, 100_000_000, 256,
            "writeback rate in KiB per second while the front end is busy; 0 pauses writeback then");

    static final List<Tunable> ALL = List.of(IDLE_MS, BUSY_KIB_PER_SEC);

    private IdleTunables() {
    }
}
