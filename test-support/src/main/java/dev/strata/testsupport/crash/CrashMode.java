package dev.strata.testsupport.crash;

/**
 * What a power loss does to the writes a {@link CrashableDevice} holds in its volatile cache
 * (completed, not yet made durable by a flush or FUA). Durable data always survives.
 */
public enum CrashMode {
    /** Every volatile write is lost: the device holds exactly its durable contents. */
    DROP_ALL,
    /** Every volatile write reached the medium (the cache was destaged just in time). */
    KEEP_ALL,
    /** A random subset of the volatile writes reached the medium, each whole. */
    SUBSET,
    /**
     * A random subset reached the medium, and one multi-sector write of it was torn at a sector
     * boundary: only its sectors before (or after) the boundary landed.
     */
    TORN;

    /** Lower-case name for reports. */
    public String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
