package dev.strata.cache.support.writeback;

import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.nio.channels.ClosedByInterruptException;

/**
 * Whether a writeback batch ended because its thread was cancelled (Ctrl-C of
 * {@code cache:writeback}, {@code dev:message … flush}, a stop) rather than because a device
 * failed. A cancelled batch is not a failing writeback: counted as one, {@code cache:stats} said
 * "writeback failing" after a Ctrl-C, with nothing in the log. Every cache policy's writeback
 * asks this before it records {@code writeback_error}.
 */
public final class Cancellation {
    private Cancellation() {
    }

    /**
     * True for an interrupt seen as an I/O exception ({@link InterruptedIOException}, a channel
     * closed by the interrupt) or any exception while the current thread is interrupted; false for
     * a socket timeout, which is an {@code InterruptedIOException} too but a real error.
     */
    public static boolean isCancellation(Exception e) {
        if (e instanceof SocketTimeoutException) {
            return false;
        }
        return e instanceof InterruptedIOException || e instanceof ClosedByInterruptException
                || Thread.currentThread().isInterrupted();
    }
}
