package dev.strata.testkit.internal.spindle;

import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Service times computed by the model (no clock involved). */
class DiskModelTest {
    private static final long GIB = 1L << 30;

    @Test
    void sequentialRequestsCostTheirTransferOnly() {
        DiskModel m = new DiskModel(DiskModel.Params.defaults(100 * GIB));
        m.service(0, 4096); // the first request seeks from the head's start
        long expected = Math.round(1024 * 1024 * 1e9 / 150e6);
        for (int i = 0; i < 100; i++) {
            assertEquals(expected, m.service(4096 + (long) i * 1024 * 1024, 1024 * 1024));
        }
    }

    @Test
    void sequentialStreamRunsAtTheTransferRate() {
        DiskModel m = new DiskModel(DiskModel.Params.defaults(100 * GIB));
        long total = 0;
        long bytes = 0;
        for (long off = 0; off < 256L << 20; off += 1 << 20) {
            total += m.service(off, 1 << 20);
            bytes += 1 << 20;
        }
        double mbPerSecond = bytes / (total / 1e9) / 1e6;
        assertEquals(150.0, mbPerSecond, 0.5);
        assertEquals(0, m.seeks());
    }

    @Test
    void randomSmallRequestsGiveAbout100To200Iops() {
        DiskModel m = new DiskModel(DiskModel.Params.defaults(100 * GIB));
        Random r = new Random(3);
        long total = 0;
        int n = 5000;
        for (int i = 0; i < n; i++) {
            total += m.service((r.nextLong() & Long.MAX_VALUE) % (100 * GIB / 4096) * 4096, 4096);
        }
        double iops = n / (total / 1e9);
        assertTrue(iops > 100 && iops < 200, "random 4 KiB IOPS " + iops);
        assertTrue(m.seeks() > n - 5);
    }

    @Test
    void seekGrowsWithDistanceAndRotationComesFromTheSeed() {
        DiskModel.Params p = DiskModel.Params.defaults(100 * GIB);
        // average over rotations: seek(d) + half a revolution + transfer, per distance
        double near = meanService(p, GIB / 100);
        double mid = meanService(p, 20 * GIB);
        double far = meanService(p, 90 * GIB);
        assertTrue(near < mid && mid < far, near + " < " + mid + " < " + far);
        double halfRev = p.revolutionNanos() / 2;
        assertEquals(0.5e6 + (4e6 - 0.5e6) * 15 / 8 * Math.sqrt(0.9) + halfRev, far, 0.4e6);
    }

    private static double meanService(DiskModel.Params p, long distance) {
        DiskModel m = new DiskModel(p);
        long total = 0;
        int n = 2000;
        for (int i = 0; i < n; i++) {
            m.service(0, 0);
            total += m.service(distance, 0);
        }
        return total / (double) n;
    }

    @Test
    void deterministicGivenTheSeed() {
        long[] a = trace(7);
        long[] b = trace(7);
        long[] c = trace(8);
        assertEquals(java.util.Arrays.toString(a), java.util.Arrays.toString(b));
        assertNotEquals(java.util.Arrays.toString(a), java.util.Arrays.toString(c));
    }

    private static long[] trace(long seed) {
        DiskModel.Params d = DiskModel.Params.defaults(GIB);
        DiskModel m = new DiskModel(new DiskModel.Params(d.rpm(), d.seekNanos(), d.trackToTrackNanos(), d.bytesPerSecond(), d.capacity(), seed));
        Random r = new Random(1);
        long[] out = new long[50];
        for (int i = 0; i < out.length; i++) {
            out[i] = m.service(r.nextInt(1 << 18) * 4096L, 4096);
        }
        return out;
    }

    @Test
    void shortForwardGapsWaitForTheRotationNotASeek() {
        DiskModel m = new DiskModel(DiskModel.Params.defaults(100 * GIB));
        m.service(0, 4096);
        long gap = m.service(4096 + 65536, 4096); // skip 64 KiB on the same track
        assertEquals(Math.round((65536 + 4096) * 1e9 / 150e6), gap);
        assertEquals(0, m.seeks());
        m.service(0, 4096); // backwards: a seek
        assertEquals(1, m.seeks());
    }
}
