package dev.strata.mirror.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceManager;
import dev.strata.api.DeviceState;
import dev.strata.mirror.internal.Devices;
import dev.strata.mirror.internal.log.DiskLog;
import dev.strata.testkit.internal.error.ErrorFactory;
import dev.strata.testsupport.crash.CrashableDevice;
import dev.strata.testsupport.target.SimpleTargetContext;
import java.io.IOException;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A remote leg that goes away degrades the mirror; the prober finds it readable again and
 * recovers it by itself, copying only the regions it missed; a leg that fails again at once waits
 * twice as long before the next try; local legs are never probed.
 */
class LegProberTest {
    static final long REGION = 64 * 1024;
    static final long SIZE = 4 << 20;
    static final long INTERVAL = 1000;
    final CrashableDevice rawA = new CrashableDevice("a", SIZE, 4096);
    final CrashableDevice rawB = new CrashableDevice("b", SIZE, 4096);
    final CrashableDevice rawLog = new CrashableDevice("log", 64 * 1024, 4096);
    final Devices.Counting a = new Devices.Counting(rawA);
    final Devices.Counting b = new Devices.Counting(rawB);
    final byte[] model = new byte[(int) SIZE];
    final Random random = new Random(7);
    MirrorTarget m;

    @AfterEach
    void close() throws IOException {
        if (m != null) {
            m.close();
        }
    }

    MirrorTarget open(int remoteMask) throws IOException {
        m = MirrorTarget.open("m0", List.of("a", "b"), List.of(a, b), new DiskLog("log", rawLog), REGION,
                MirrorTarget.Options.defaults().withManual(true).withNosync(true).withClearDelayNanos(0));
        m.autoRecover(leg -> (remoteMask & (1 << leg)) != 0, INTERVAL);
        return m;
    }

    Set<Integer> randomWrite() throws IOException {
        int len = 4096 * (1 + random.nextInt(8));
        long off = 4096L * random.nextInt((int) ((SIZE - len) / 4096));
        byte[] data = new byte[len];
        random.nextBytes(data);
        m.write(off, ByteBuffer.wrap(data), 0);
        System.arraycopy(data, 0, model, (int) off, len);
        Set<Integer> r = new HashSet<>();
        for (long x = off / REGION; x <= (off + len - 1) / REGION; x++) {
            r.add((int) x);
        }
        return r;
    }

    void breakB() throws IOException {
        b.swap(new ErrorFactory().create(SimpleTargetContext.of("eb", "size=4M block_size=4096")));
    }

    @Test
    void aRemoteLegThatComesBackIsRecoveredWithOnlyTheRegionsItMissed() throws IOException {
        open(0b10);
        for (int i = 0; i < 30; i++) {
            randomWrite();
        }
        m.flush();
        m.clearerRunOnce();
        assertEquals("0", m.status().get("dirty_regions"));
        assertEquals("b", m.status().get("auto_recover"));

        breakB();
        Set<Integer> missed = new HashSet<>();
        for (int i = 0; i < 20; i++) {
            missed.addAll(randomWrite());
        }
        m.flush();
        assertEquals("out_of_sync", m.status().get("leg.b"));
        assertEquals(0, m.proberRunOnce(0), "still unreachable: not recovered");
        assertEquals("out_of_sync", m.status().get("leg.b"));

        b.swap(rawB); // the connection is back
        assertEquals(0, m.proberRunOnce(INTERVAL - 1), "not before the interval has passed since the failed probe");
        long bytesBefore = Long.parseLong(m.status().get("resync_bytes"));
        assertEquals(1, m.proberRunOnce(INTERVAL));
        assertEquals("recovering", m.status().get("leg.b"));
        m.resyncAll();
        assertEquals("in_sync", m.status().get("leg.b"));
        assertEquals("1", m.status().get("auto_recoveries"));
        long copied = Long.parseLong(m.status().get("resync_bytes")) - bytesBefore;
        assertEquals(missed.size() * REGION, copied, "only the regions written while b was away are copied");
        m.flush();
        assertArrayEquals(model, rawA.currentImage());
        assertArrayEquals(model, rawB.currentImage());
    }

    @Test
    void aLegThatFailsAgainAtOnceWaitsTwiceAsLong() throws IOException {
        open(0b10);
        breakB();
        randomWrite();
        assertEquals("out_of_sync", m.status().get("leg.b"));
        b.swap(rawB);
        assertEquals(1, m.proberRunOnce(0));
        breakB(); // fails again during its recovery
        randomWrite();
        assertEquals("out_of_sync", m.status().get("leg.b"));
        b.swap(rawB);
        assertEquals(0, m.proberRunOnce(INTERVAL), "one interval is not enough after a recovery that failed");
        assertEquals(1, m.proberRunOnce(2 * INTERVAL));
        m.resyncAll();
        assertEquals("in_sync", m.status().get("leg.b"));
        m.flush();
        assertArrayEquals(model, rawB.currentImage());
    }

    @Test
    void localLegsAreNeverProbed() throws IOException {
        open(0);
        breakB();
        randomWrite();
        b.swap(rawB);
        assertEquals(0, m.proberRunOnce(10 * INTERVAL));
        assertEquals("out_of_sync", m.status().get("leg.b"));
        assertFalse(m.status().containsKey("auto_recover"));
    }

    @Test
    void remoteLegsAreTheLegsWhoseTypeIsNbd() {
        Map<String, String> types = Map.of("a", "file", "b", "nbd", "c", "nbd");
        DeviceManager dm = (DeviceManager) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {DeviceManager.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("info")) {
                        String t = types.get((String) args[0]);
                        return t == null ? Optional.empty()
                                : Optional.of(new DeviceInfo((String) args[0], t, Map.of(), 0, 512, DeviceState.ACTIVE, List.of(), List.of()));
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
        assertFalse(RemoteLegs.isRemote(dm, "a"));
        assertTrue(RemoteLegs.isRemote(dm, "b"));
        assertTrue(RemoteLegs.isRemote(dm, "c"));
        assertFalse(RemoteLegs.isRemote(dm, "gone"));
        assertFalse(RemoteLegs.isRemote(null, "b"));
        assertTrue(RemoteLegs.PROBE_INTERVAL_MS > 0);
    }
}
