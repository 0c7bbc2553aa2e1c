package dev.strata.nbd.internal.server;

/**
 * Per-export limits.
 *
 * @param maxConnections     clients served at once; the next one is refused at GO (0: no limit)
 * @param idleTimeoutMillis  a connection with no request running or arriving for this long is dropped (0: never)
 */
public record ExportLimits(int maxConnections, long idleTimeoutMillis) {
    public static final ExportLimits NONE = new ExportLimits(0, 0);
}
