package dev.strata.cache.support.time;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.DeviceTimeoutException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;

class TimeTest {
    @Test
    void aDeadlineExpiresWhenTheClockPassesIt() {
        ManualClock clock = new ManualClock();
        Deadline d = Deadline.after(clock, 5, TimeUnit.SECONDS);
        assertEquals(TimeUnit.SECONDS.toNanos(5), d.remaining());
        clock.advance(4, TimeUnit.SECONDS);
        assertFalse(d.expired());
        clock.advance(1, TimeUnit.SECONDS);
        assertTrue(d.expired());
    }

    @Test
    void awaitingAnExpiredDeadlineTimesOutNamingWhatItWaitedFor() {
        ManualClock clock = new ManualClock();
        Deadline d = Deadline.after(clock, 1, TimeUnit.SECONDS);
        clock.advance(2, TimeUnit.SECONDS);
        ReentrantLock lock = new ReentrantLock();
        Condition c = lock.newCondition();
        lock.lock();
        try {
            DeviceTimeoutException e = assertThrows(DeviceTimeoutException.class, () -> d.await(c, "wb", "a free buffer"));
            assertTrue(e.getMessage().contains("timed out waiting for a free buffer"), e.getMessage());
        } finally {
            lock.unlock();
        }
    }

    @Test
    void periodicIsDueOncePerInterval() {
        ManualClock clock = new ManualClock();
        Periodic p = new Periodic(clock);
        long sec = TimeUnit.SECONDS.toNanos(1);
        assertFalse(p.due(sec));
        clock.advance(999, TimeUnit.MILLISECONDS);
        assertFalse(p.due(sec));
        clock.advance(1, TimeUnit.MILLISECONDS);
        assertTrue(p.due(sec));
        assertFalse(p.due(sec), "due again without time passing");
        clock.advance(5, TimeUnit.SECONDS);
        assertFalse(p.due(0), "an interval of 0 is off");
        assertTrue(p.due(sec));
    }
}
