package dev.strata.testsupport.crash;

import dev.strata.api.BlockDevice;

/**
 * The shape of generated sequences: the address space ({@code units} of {@code unitSize} bytes
 * at the start of the target; small, so that writes overlap), the longest request in units, the
 * longest sequence, and which kinds of operations occur.
 */
public record Workload(int units, int unitSize, int maxRun, int maxOps,
        boolean zeroes, boolean discards, boolean crashes, boolean restarts) {

    /** 64 units of 4 KiB, requests up to 4 units, up to 60 operations, every kind of operation. */
    public static final Workload DEFAULT = new Workload(64, 4096, 4, 60, true, true, true, true);

    public Workload {
        if (units <= 0 || unitSize <= 0 || unitSize % BlockDevice.SECTOR != 0 || maxRun <= 0 || maxOps <= 0) {
            throw new IllegalArgumentException("bad workload: " + units + " units of " + unitSize + ", run " + maxRun + ", ops " + maxOps);
        }
    }

    /** Bytes addressed: {@code units * unitSize}. */
    public long bytes() {
        return (long) units * unitSize;
    }

    public int sectorsPerUnit() {
        return unitSize / BlockDevice.SECTOR;
    }

    public Workload withUnits(int units, int unitSize) {
        return new Workload(units, unitSize, maxRun, maxOps, zeroes, discards, crashes, restarts);
    }

    public Workload withMaxRun(int maxRun) {
        return new Workload(units, unitSize, maxRun, maxOps, zeroes, discards, crashes, restarts);
    }

    public Workload withMaxOps(int maxOps) {
        return new Workload(units, unitSize, maxRun, maxOps, zeroes, discards, crashes, restarts);
    }

    public Workload withoutZeroes() {
        return new Workload(units, unitSize, maxRun, maxOps, false, discards, crashes, restarts);
    }

    public Workload withoutDiscards() {
        return new Workload(units, unitSize, maxRun, maxOps, zeroes, false, crashes, restarts);
    }

    /** No crashes and no restarts: for targets that keep nothing across a reopen (e.g. {@code memory}). */
    public Workload withoutCrashes() {
        return new Workload(units, unitSize, maxRun, maxOps, zeroes, discards, false, false);
    }
}
