package dev.strata.api;

/**
 * How a target holds one of its lower devices. The manager refuses a claim that conflicts with
 * the ones already held and names the holder, so that no device is ever written by two policies
 * that each believe they own it.
 */
public enum Claim {
    /**
     * The holder owns the device's contents (a cache's cache and backing devices, a mirror's
     * legs): no other device may be stacked on it, shared or exclusive.
     */
    EXCLUSIVE,
    /**
     * The holder reads and writes through the device without owning its layout (a linear window,
     * a read-only view): others may hold shared claims too, but nobody an exclusive one.
     */
    SHARED;

    /** Lower case, as shown by {@code dev:list}. */
    public String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
