package dev.strata.nbd.internal.session;

/** What the negotiation needs to know about an export. */
public interface ExportView {
    String name();

    /** Free text shown by NBD_OPT_LIST and NBD_INFO_DESCRIPTION; may be empty. */
    String description();

    /** Size in bytes. */
    long size();

    boolean readOnly();

    /** Whether WRITE_ZEROES with FAST_ZERO can succeed (so SEND_FAST_ZERO is advertised). */
    default boolean canFastZero() {
        return false;
    }

    /**
     * Takes one of the export's connection places for a client that chose it (GO or
     * EXPORT_NAME); the connection gives it back with {@link #releaseConnection()}.
     *
     * @return null if admitted, else why not (the export is full), for the client to read
     */
    default String tryAdmit() {
        return null;
    }

    /**
     * Waits (a bounded time) until the device behind the export can be served, so that its
     * size is never reported before the device is built.
     *
     * @return null if it is ready, else why not, for the client to read
     */
    default String awaitReady() throws java.io.IOException {
        return null;
    }

    /**
     * Like {@link #awaitReady()} without waiting: for a client refused once on this connection
     * already (nbdinfo asks INFO, then GO), which would otherwise wait twice.
     */
    default String readyNow() {
        return null;
    }

    /** Gives back a place taken by {@link #tryAdmit()}. */
    default void releaseConnection() {
    }
}
