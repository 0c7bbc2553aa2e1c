package dev.strata.cache.support.writeback;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.nio.channels.ClosedByInterruptException;
import org.junit.jupiter.api.Test;

class CancellationTest {
    @Test
    void anInterruptSeenAsIoIsACancellation() {
        assertTrue(Cancellation.isCancellation(new InterruptedIOException("interrupted")));
        assertTrue(Cancellation.isCancellation(new ClosedByInterruptException()));
    }

    @Test
    void aSocketTimeoutAndAPlainIoErrorAreNot() {
        assertFalse(Cancellation.isCancellation(new SocketTimeoutException("read timed out")));
        assertFalse(Cancellation.isCancellation(new IOException("device failed")));
    }

    @Test
    void anyErrorWhileTheThreadIsInterruptedIsACancellation() {
        Thread.currentThread().interrupt();
        try {
            assertTrue(Cancellation.isCancellation(new IOException("closed")));
        } finally {
            Thread.interrupted();
        }
    }
}
