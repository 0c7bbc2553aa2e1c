package dev.strata.mirror.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.strata.mirror.internal.Devices;
import dev.strata.mirror.internal.log.CoreLog;
import dev.strata.testsupport.crash.CrashableDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The resync source is not taken out while regions still wait for resync: the other legs may be
 * stale there, and making one of them the source would copy the stale data over the good one
 * (found by the zookeeper log's crash model, where the log survives a power cut of the legs).
 */
class ResyncSourceTest {
    static final long REGION = 64 * 1024;

    @Test
    void aFailingSourceWithResyncPendingFailsTheRequestAndStaysTheSource() throws IOException {
        CrashableDevice rawA = new CrashableDevice("a", 1 << 20, 4096);
        CrashableDevice rawB = new CrashableDevice("b", 1 << 20, 4096);
        rawA.write(0, ByteBuffer.allocate(4096).putLong(0, 42), 0); // only leg a holds region 0's data
        Devices.Counting a = new Devices.Counting(rawA);
        Devices.Counting b = new Devices.Counting(rawB);
        // a core log: every region needs the initial copy from leg a
        MirrorTarget m = MirrorTarget.open("m0", List.of("a", "b"), List.of(a, b), new CoreLog(), REGION,
                MirrorTarget.Options.defaults().withManual(true));
        a.beforeWrite = offset -> {
            throw Devices.broken("a", offset);
        };
        assertThrows(IOException.class, () -> m.write(5 * REGION, ByteBuffer.allocate(4096), 0));
        assertEquals("in_sync", m.status().get("leg.a"), "the source stays in");
        assertEquals("0", m.status().get("leg_failures"));
        a.beforeWrite = null;
        m.resyncAll();
        ByteBuffer got = ByteBuffer.allocate(4096);
        rawB.read(0, got);
        assertEquals(42, got.getLong(0), "leg b got region 0 from a, not the other way round");
        m.write(5 * REGION, ByteBuffer.allocate(4096).putLong(0, 7), 0);
        m.flush();
        byte[] x = new byte[1 << 20];
        byte[] y = new byte[1 << 20];
        rawA.read(0, ByteBuffer.wrap(x));
        rawB.read(0, ByteBuffer.wrap(y));
        assertArrayEquals(x, y);
        m.close();
    }
}
