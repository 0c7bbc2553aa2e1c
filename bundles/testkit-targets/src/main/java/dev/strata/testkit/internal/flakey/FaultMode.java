package dev.strata.testkit.internal.flakey;

import java.util.Locale;

/** What {@code flakey} does to matching requests while it is down. */
enum FaultMode {
    /** Reads fail with an I/O error. */
    ERROR_READS(true),
    /** Writes, zeroing, discards and flushes fail with an I/O error. */
    ERROR_WRITES(false),
    /** Writes, zeroing and discards are acknowledged and thrown away. */
    DROP_WRITES(false),
    /** Reads return data with byte {@code corrupt_byte} of every block changed. */
    CORRUPT_READS(true),
    /** Writes store data with byte {@code corrupt_byte} of every block changed. */
    CORRUPT_WRITES(false);

    final boolean reads;

    FaultMode(boolean reads) {
        this.reads = reads;
    }

    String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
