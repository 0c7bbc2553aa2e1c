package dev.strata.cache.writecache.internal.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import dev.strata.api.CacheTarget.Keys;
import dev.strata.cache.support.time.ManualClock;
import dev.strata.cache.writecache.internal.recovery.Recovery;
import dev.strata.testsupport.crash.CrashableDevice;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * writecache reports the recent writeback pace under the shared key ({@link Keys#WRITEBACK_RATE})
 * that cache:stats' summary reads for "writing back at …": without it the summary said
 * "writeback idle" while {@code written_back_blocks} rose. Blocks counted are those of batches
 * that ended (written, flushed, freed); the rate falls to 0 a window after the last batch.
 */
class WritebackRateTest {
    static final int BS = 4096;
    static final int SLOTS = 64;

    @Test
    void theWritebackRateIsReportedWhileWritingBackAndFallsToZeroAfter() throws Exception {
        ManualClock clock = new ManualClock(TimeUnit.SECONDS.toNanos(1000));
        CrashableDevice backing = new CrashableDevice("backing", 4 << 20, BS);
        CrashableDevice cache = new CrashableDevice("cache", WritecacheSubject.cacheBytes(SLOTS, BS), BS);
        WritecacheTarget t = Recovery.open("wc", backing, cache, "id-1", 0, false, Tunables.DEFAULTS,
                Options.defaults().manual().withClock(clock));
        try {
            assertNotNull(t.status().get(Keys.WRITEBACK_RATE), "writecache does not report " + Keys.WRITEBACK_RATE);
            assertEquals(0, rate(t), "a rate before any writeback");
            for (int i = 0; i < 10; i++) {
                t.write((long) i * BS, ByteBuffer.allocate(BS), 0);
            }
            t.flush();
            assertEquals(10, t.writebackOldest(10));
            // 10 blocks in the 5 s window's first second: 10 * 1 s / (4 s + the part of this one gone by)
            clock.advance(500, TimeUnit.MILLISECONDS);
            assertEquals(10L * 1000 / 4500, rate(t));
            assertEquals(10, Long.parseLong(t.status().get(Keys.WRITTEN_BACK_BLOCKS)));
            clock.advance(Stats.WRITEBACK_RATE_WINDOW_S, TimeUnit.SECONDS);
            assertEquals(0, rate(t), "the rate a window after the last batch");
        } finally {
            t.close();
        }
    }

    static long rate(WritecacheTarget t) {
        return Long.parseLong(t.status().get(Keys.WRITEBACK_RATE));
    }
}
