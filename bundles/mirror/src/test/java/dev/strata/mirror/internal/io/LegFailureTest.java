package dev.strata.mirror.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.BlockDevice;
import dev.strata.api.InvalidArgumentException;
import dev.strata.mirror.internal.Devices;
import dev.strata.mirror.internal.log.DiskLog;
import dev.strata.testkit.internal.error.ErrorFactory;
import dev.strata.testkit.internal.flakey.FlakeyFactory;
import dev.strata.testsupport.crash.CrashableDevice;
import dev.strata.testsupport.target.SimpleTargetContext;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A leg that fails (flakey writes, then an error device for everything) degrades the mirror
 * without failing I/O, every byte verified; its missed regions stay marked, survive a restart,
 * and only they are resynced when it is recovered.
 */
class LegFailureTest {
    static final long REGION = 64 * 1024;
    static final long SIZE = 8 << 20;
    final AtomicLong clock = new AtomicLong();
    final CrashableDevice rawA = new CrashableDevice("a", SIZE, 4096);
    final CrashableDevice rawB = new CrashableDevice("b", SIZE, 4096);
    final CrashableDevice rawLog = new CrashableDevice("log", 64 * 1024, 4096);
    final Devices.Counting a = new Devices.Counting(rawA);
    final Devices.Counting b = new Devices.Counting(rawB);
    final byte[] model = new byte[(int) SIZE];
    final Random random = new Random(15);
    MirrorTarget m;

    @AfterEach
    void close() throws IOException {
        if (m != null) {
            m.close();
        }
    }

    MirrorTarget open() throws IOException {
        m = MirrorTarget.open("m0", List.of("a", "b"), List.of(a, b), new DiskLog("log", rawLog), REGION,
                MirrorTarget.Options.defaults().withManual(true).withNosync(true).withClock(clock::get));
        return m;
    }

    /** A verified write of 4..64 KiB at a random 4 KiB offset; returns the regions it touched. */
    Set<Integer> randomWrite() throws IOException {
        int len = 4096 * (1 + random.nextInt(16));
        long off = 4096L * random.nextInt((int) ((SIZE - len) / 4096));
        byte[] data = new byte[len];
        random.nextBytes(data);
        m.write(off, ByteBuffer.wrap(data), random.nextInt(4) == 0 ? BlockDevice.FUA : 0);
        System.arraycopy(data, 0, model, (int) off, len);
        Set<Integer> r = new HashSet<>();
        for (long x = off / REGION; x <= (off + len - 1) / REGION; x++) {
            r.add((int) x);
        }
        return r;
    }

    void verifyAll(BlockDevice d) throws IOException {
        byte[] got = new byte[(int) SIZE];
        for (long off = 0; off < SIZE; off += 1 << 20) {
            d.read(off, ByteBuffer.wrap(got, (int) off, 1 << 20));
        }
        assertArrayEquals(model, got);
    }

    void settle() throws IOException {
        m.flush();
        clock.addAndGet(10_000_000_000L);
        m.clearerRunOnce();
        assertEquals("0", m.status().get("dirty_regions"));
    }

    @Test
    void flakeyWritesThenErrorDeviceThenRecovery() throws IOException {
        open();
        for (int i = 0; i < 50; i++) {
            randomWrite();
        }
        settle();
        // leg b starts failing every write
        b.swap(new FlakeyFactory().create(SimpleTargetContext.of("fb", "device=b up=0 down=3600000 mode=error_writes").with("b", rawB)));
        Set<Integer> missed = new HashSet<>();
        for (int i = 0; i < 40; i++) {
            missed.addAll(randomWrite());
        }
        m.flush();
        assertEquals("out_of_sync", m.status().get("leg.b"));
        assertEquals("1", m.status().get("leg_failures"));
        // then fails everything, reads included: reads are served by a
        b.swap(new ErrorFactory().create(SimpleTargetContext.of("eb", "size=8M block_size=4096")));
        for (int i = 0; i < 40; i++) {
            missed.addAll(randomWrite());
        }
        m.flush();
        clock.addAndGet(10_000_000_000L);
        m.clearerRunOnce();
        verifyAll(m);
        assertEquals(missed.size(), m.dirtyRegions().cardinality(), "nothing is cleared while a leg is out");

        // a restart keeps the leg out of sync and its regions marked
        m.close();
        open();
        m.resyncAll();
        assertEquals("out_of_sync", m.status().get("leg.b"));
        assertEquals(missed.size(), m.dirtyRegions().cardinality());
        verifyAll(m);

        // the leg comes back: only the missed regions are copied
        b.swap(rawB);
        long before = Long.parseLong(m.status().get("resync_done"));
        long bytesBefore = Long.parseLong(m.status().get("resync_bytes"));
        assertEquals(0, bytesBefore, "with one leg taking writes, the restart's resync copies nothing");
        m.message("recover", "b");
        assertEquals("recovering", m.status().get("leg.b"));
        m.resyncAll();
        assertEquals("in_sync", m.status().get("leg.b"));
        assertEquals(missed.size(), Long.parseLong(m.status().get("resync_done")) - before);
        long copied = Long.parseLong(m.status().get("resync_bytes")) - bytesBefore;
        assertTrue(copied <= missed.size() * REGION && copied > (missed.size() - 1) * REGION, "bytes resynced: " + copied);
        m.flush();
        assertArrayEquals(model, rawB.currentImage());
        assertArrayEquals(model, rawA.currentImage());
        settle();
    }

    @Test
    void aReadErrorTakesTheLegOutAndTheReadIsServedByTheOther() throws IOException {
        open();
        for (int i = 0; i < 20; i++) {
            randomWrite();
        }
        b.swap(new FlakeyFactory().create(SimpleTargetContext.of("fb", "device=b up=0 down=3600000 mode=error_reads").with("b", rawB)));
        for (int i = 0; i < 8; i++) {
            verifyAll(m); // round robin: some reads hit b and fail over
        }
        assertEquals("out_of_sync", m.status().get("leg.b"));
    }

    @Test
    void writesDuringRecoveryReachTheRecoveringLegAndResyncNeverOverwritesThem() throws IOException {
        open();
        m.message("fail", "b");
        Set<Integer> missed = new HashSet<>();
        for (int i = 0; i < 30; i++) {
            missed.addAll(randomWrite());
        }
        m.message("recover", "b");
        // interleave writes with small resync steps: a write into a region not yet copied copies it first
        for (int i = 0; i < 30; i++) {
            randomWrite();
            m.resyncRunOnce(1);
        }
        m.resyncAll();
        m.flush();
        assertEquals("in_sync", m.status().get("leg.b"));
        assertArrayEquals(model, rawB.currentImage());
        assertArrayEquals(model, rawA.currentImage());
    }

    @Test
    void theLastInSyncLegCannotBeFailedAndRecoverNeedsAnOutOfSyncLeg() throws IOException {
        open();
        m.message("fail", "a");
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> m.message("fail", "b"));
        assertEquals("mirror m0: 'b' is the last in-sync leg; it cannot be failed", e.getMessage());
        e = assertThrows(InvalidArgumentException.class, () -> m.message("recover", "b"));
        assertEquals("mirror m0: leg 'b' is in_sync; only an out-of-sync leg can be recovered", e.getMessage());
        e = assertThrows(InvalidArgumentException.class, () -> m.message("recover", "zz"));
        assertEquals("mirror m0: recover needs a leg; 'zz' is none of a, b", e.getMessage());
    }

    @Test
    void everyLegFailingFailsTheWrite() throws IOException {
        open();
        a.swap(new ErrorFactory().create(SimpleTargetContext.of("ea", "size=8M block_size=4096")));
        b.swap(new ErrorFactory().create(SimpleTargetContext.of("eb", "size=8M block_size=4096")));
        assertThrows(IOException.class, () -> m.write(0, ByteBuffer.allocate(4096), 0));
        a.swap(rawA);
        b.swap(rawB);
    }
}
