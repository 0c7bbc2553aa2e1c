package dev.strata.tools.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.Target;
import dev.strata.mirror.internal.MirrorFactory;
import dev.strata.testsupport.crash.CrashMode;
import dev.strata.testsupport.crash.CrashableDevice;
import dev.strata.tools.internal.format.CacheFormat;
import dev.strata.tools.internal.format.Formats;
import dev.strata.tools.internal.format.MirrorLogFormat;
import dev.strata.tools.internal.format.Overlay;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The mirror's disk log, on logs made by the real mirror target: clean, after power cuts, every header byte damaged. */
class MirrorLogToolTest {
    private final CacheFormat format = new MirrorLogFormat();

    /** A mirror over two legs with a disk log: writes, flushes; closed cleanly or cut in {@code mode}. Returns the log image. */
    private static byte[] make(long seed, boolean close, CrashMode mode) throws Exception {
        CrashableDevice l0 = new CrashableDevice("l0", 4L << 20, 512);
        CrashableDevice l1 = new CrashableDevice("l1", 4L << 20, 512);
        CrashableDevice log = new CrashableDevice("log0", 64L << 10, 512);
        Target t = new MirrorFactory().create(new Context("m0", Map.of("legs", "l0,l1", "region_size", "64k",
                "log", "disk:log0", "nosync", "true"), Map.of("l0", l0, "l1", l1, "log0", log)));
        Random r = new Random(seed);
        byte[] buf = new byte[4096];
        for (int i = 0; i < 40; i++) {
            r.nextBytes(buf);
            t.write(r.nextInt(1024) * 4096L, ByteBuffer.wrap(buf), i % 7 == 0 ? 1 : 0);
            if (i % 10 == 9) {
                t.flush();
            }
        }
        byte[] image = close ? null : log.crashImage(mode, r);
        t.close();
        return close ? log.durableImage() : image;
    }

    @Test
    void cleanAndCrashLogsCheckClean() throws Exception {
        CrashableDevice clean = CrashableDevice.ofImage("log0", make(1, true, null), 512);
        assertEquals("mirror-log", Formats.detect(clean).name());
        Images.Run check = Images.run(out -> Tool.check(format, clean, out));
        assertEquals(0, check.status(), check.out());
        Images.Run dump = Images.run(out -> Tool.dump(format, clean, false, out));
        assertTrue(dump.out().startsWith("policy: mirror-log\nlegs: 2\nregion_size: 65536\nregions: 64\n"), dump.out());
        CrashMode[] modes = {CrashMode.DROP_ALL, CrashMode.KEEP_ALL, CrashMode.SUBSET, CrashMode.TORN};
        for (int seed = 0; seed < 8; seed++) {
            CrashableDevice log = CrashableDevice.ofImage("log0", make(10 + seed, false, modes[seed % 4]), 512);
            Images.Run c = Images.run(out -> Tool.check(format, log, out));
            assertEquals(0, c.status(), "seed " + seed + ": " + c.out());
        }
        Images.Run wb = Images.run(out -> Tool.writeback(format, clean, clean, out));
        assertEquals(0, wb.status());
        assertTrue(wb.out().startsWith("a mirror log holds no data"), wb.out());
    }

    @Test
    void everyHeaderByteDamagedIsDetectedAndRepaired() throws Exception {
        byte[] image = make(2, true, null);
        CrashableDevice base = CrashableDevice.ofImage("log0", image, 512);
        List<Long> missed = new ArrayList<>();
        int repaired = 0;
        for (long at = 0; at < 8192; at++) {
            boolean blankCopy = true;
            long copy = at < 4096 ? 0 : 4096;
            for (int i = 0; i < 4096; i++) {
                blankCopy &= image[(int) (copy + i)] == 0;
            }
            if (blankCopy) {
                continue; // a copy never written: nothing the mirror reads there
            }
            byte flipped = (byte) (image[(int) at] ^ (1 << (at % 8)));
            Overlay damaged = new Overlay(base);
            damaged.patch(at, new byte[] {flipped});
            if (format.scan(damaged).problems().isEmpty()) {
                missed.add(at);
                continue;
            }
            if (at % 31 == 0) {
                byte[] img = image.clone();
                img[(int) at] = flipped;
                CrashableDevice log = CrashableDevice.ofImage("log0", img, 512);
                Images.Run r = Images.run(out -> Tool.repair(format, log, out));
                assertEquals(0, r.status(), "byte " + at + ": " + r.out());
                assertArrayEquals(image, log.durableImage(), "byte " + at + " not restored");
                repaired++;
            }
        }
        assertEquals(List.of(), missed, "damaged header bytes not detected");
        assertTrue(repaired > 10, "repaired " + repaired);
    }

    /**
     * Multi-byte damage of the headers: random runs and zeroed sectors in one copy, then both. One
     * copy damaged: the log still opens in the real mirror (the other copy, as for a torn write) and
     * repair leaves it clean. Both copies unreadable: repair refuses with one line and writes nothing.
     */
    @Test
    void multiByteHeaderDamage() throws Exception {
        byte[] image = make(3, true, null);
        Random r = new Random(7);
        for (int c = 0; c < 24; c++) {
            byte[] img = image.clone();
            int copy = c % 2 == 0 ? 0 : 4096;
            if (c % 3 == 0) {
                int sector = copy + 512 * r.nextInt(8);
                java.util.Arrays.fill(img, sector, sector + 512, (byte) 0);
            } else {
                int n = 2 + r.nextInt(60);
                int at = copy + r.nextInt(4096 - n);
                for (int i = 0; i < n; i++) {
                    img[at + i] = (byte) r.nextInt(256);
                }
            }
            CrashableDevice log = CrashableDevice.ofImage("log0", img, 512);
            Images.Run repair = Images.run(out -> Tool.repair(format, log, out));
            assertEquals(0, repair.status(), "case " + c + ": " + repair.out());
            assertEquals(0, Images.run(out -> Tool.check(format, log, out)).status(), "case " + c);
            CrashableDevice l0 = new CrashableDevice("l0", 4L << 20, 512);
            CrashableDevice l1 = new CrashableDevice("l1", 4L << 20, 512);
            Target t = new MirrorFactory().create(new Context("m0", Map.of("legs", "l0,l1", "region_size", "64k",
                    "log", "disk:log0"), Map.of("l0", l0, "l1", l1, "log0", log)));
            t.close();
        }
        byte[] both = image.clone();
        java.util.Arrays.fill(both, 12, 40, (byte) 0x5A); // the fields, in both copies
        java.util.Arrays.fill(both, 4096 + 12, 4096 + 40, (byte) 0x5A);
        CrashableDevice log = CrashableDevice.ofImage("log0", both, 512);
        Images.Run refused = Images.run(out -> Tool.repair(format, log, out));
        assertEquals(1, refused.status(), refused.out());
        assertEquals(1, refused.out().lines().count(), refused.out());
        assertTrue(refused.out().contains("zero the log device's first 8 KiB"), refused.out());
        assertArrayEquals(both, log.durableImage(), "nothing was written");
    }
}
