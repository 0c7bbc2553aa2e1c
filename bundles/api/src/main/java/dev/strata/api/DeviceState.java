package dev.strata.api;

/** The state of a mapped device's I/O gate. */
public enum DeviceState {
    /** I/O flows to the target. */
    ACTIVE,
    /** Suspended by the user or for a reload: I/O waits at the gate. */
    SUSPENDED,
    /** The target's factory is gone (its bundle is being updated): I/O waits at the gate until it returns. */
    WAITING_FOR_TARGET
}
