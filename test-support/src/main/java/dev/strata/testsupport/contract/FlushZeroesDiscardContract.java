package dev.strata.testsupport.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.strata.api.BlockDevice;
import dev.strata.api.FastZeroUnsupportedException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The contract's part for flush and FUA, writeZeroes (NO_HOLE, FUA, FAST_ZERO), discard and extents.
 */
public abstract class FlushZeroesDiscardContract extends ReadWriteContract {
    // ------------------------------------------------------------------ flush and FUA

    @Test
    void flushAndFuaWritesAreAccepted() throws IOException {
        device.flush(); // on an untouched device
        writeBytes(4096, pattern(31, 8192), BlockDevice.FUA);
        writeBytes(512 * 3, pattern(32, 1536), BlockDevice.FUA);
        writeBytes(MIB + 512, pattern(33, MIB), 0);
        device.flush();
        device.flush();
        writeBytes(2 * MIB, pattern(34, 4096), 0);
        device.writeZeroes(MIB + 4096, 8192, BlockDevice.FUA);
        zeroModel(MIB + 4096, 8192);
        device.flush();
        verifyAgainstModel();
    }

    // ------------------------------------------------------------------ writeZeroes and discard

    @Test
    void writeZeroesMakesZeroes() throws IOException {
        long size = device.size();
        writeBytes(0, pattern(41, (int) size), 0);
        long[][] ranges = { // {offset, length, flags}
            {512, 512, 0}, {4096 * 2 + 512, 1536, BlockDevice.NO_HOLE}, {64 * KIB, 64 * KIB, 0},
            {MIB - 512, MIB + 1024, BlockDevice.NO_HOLE}, {3 * MIB, 2 * MIB, BlockDevice.FUA},
            {5 * MIB + 512, 4096 * 3, BlockDevice.FUA | BlockDevice.NO_HOLE}, {size - 4096, 4096, 0},
        };
        for (long[] r : ranges) {
            device.writeZeroes(r[0], r[1], (int) r[2]);
            zeroModel(r[0], r[1]);
            assertAllZero(readBytes(r[0], (int) r[1]), r[0]);
        }
        verifyAgainstModel();
        // rewriting a zeroed range works
        writeBytes(MIB, pattern(42, 8192), 0);
        writeBytes(64 * KIB + 512, pattern(43, 1024), 0);
        verifyAgainstModel();
        // the whole device
        device.writeZeroes(0, size, 0);
        zeroModel(0, size);
        verifyAgainstModel();
    }

    @Test
    void fastZeroWorksOrIsRefusedConsistentlyWithCanFastZero() throws IOException {
        writeBytes(0, pattern(51, 4 * MIB), 0);
        boolean fast = device.canFastZero();
        long[][] ranges = {{MIB, MIB}, {512, 1536}, {2 * MIB + 512, 64 * KIB}};
        for (long[] r : ranges) {
            if (fast) {
                device.writeZeroes(r[0], r[1], BlockDevice.FAST_ZERO);
                zeroModel(r[0], r[1]);
            } else {
                assertThrows(FastZeroUnsupportedException.class,
                        () -> device.writeZeroes(r[0], r[1], BlockDevice.FAST_ZERO),
                        "canFastZero() is false, so FAST_ZERO must be refused");
                assertThrows(FastZeroUnsupportedException.class,
                        () -> device.writeZeroes(r[0], r[1], BlockDevice.FAST_ZERO | BlockDevice.NO_HOLE));
            }
        }
        assertEquals(fast, device.canFastZero(), "canFastZero() must not change");
        verifyAgainstModel();
    }

    @Test
    void discardLeavesOldDataOrZeroes() throws IOException {
        long size = device.size();
        byte[] before = pattern(61, (int) size);
        writeBytes(0, before, 0);
        long[][] ranges = {{512, 512}, {4096 + 512, 1536}, {64 * KIB, 64 * KIB}, {MIB - 512, 2 * MIB + 1024},
            {4 * MIB, 4096}, {size - MIB, MIB}};
        for (long[] r : ranges) {
            device.discard(r[0], r[1]);
        }
        byte[] after = readBytes(0, (int) size);
        boolean[] discarded = new boolean[(int) (size / SECTOR)];
        for (long[] r : ranges) {
            for (long s = r[0] / SECTOR; s < (r[0] + r[1]) / SECTOR; s++) {
                discarded[(int) s] = true;
            }
        }
        for (int s = 0; s < discarded.length; s++) {
            int from = s * SECTOR;
            boolean same = Arrays.equals(after, from, from + SECTOR, before, from, from + SECTOR);
            if (discarded[s]) {
                if (!same && !isZero(after, from, SECTOR)) {
                    fail("discarded sector at " + from + " holds neither its old data nor zeroes");
                }
                System.arraycopy(after, from, model, from, SECTOR); // whichever it is, it must stay
            } else {
                assertTrue(same, "discard changed a sector outside its range at offset " + from);
            }
        }
        // writes into and around discarded ranges work
        writeBytes(64 * KIB + 4096, pattern(62, 8192), 0);
        writeBytes(MIB - 1024, pattern(63, 4096), 0);
        writeBytes(size - 512, pattern(64, 512), 0);
        verifyAgainstModel();
        // discard + writeZeroes reads zero for sure
        device.discard(2 * MIB, MIB);
        device.writeZeroes(2 * MIB, MIB, 0);
        zeroModel(2 * MIB, MIB);
        verifyAgainstModel();
    }

    // ------------------------------------------------------------------ extents

    @Test
    void extentsCoverTheRangeAndAgreeWithTheData() throws IOException {
        long size = device.size();
        writeBytes(0, pattern(71, 256 * KIB), 0);
        writeBytes(MIB + 512, pattern(72, 3 * 512), 0);
        writeBytes(3 * MIB, pattern(73, MIB), 0);
        device.writeZeroes(3 * MIB, 512 * KIB, 0);
        zeroModel(3 * MIB, 512 * KIB);
        device.discard(3 * MIB + 512 * KIB, 256 * KIB);
        byte[] now = readBytes(0, (int) size);
        System.arraycopy(now, 0, model, 0, now.length);

        for (long[] r : new long[][] {{0, size}, {512, 4096}, {MIB, 2 * MIB + 512}, {size - 512, 512},
                {3 * MIB + 4096, 64 * KIB}}) {
            long off = r[0];
            long end = r[0] + r[1];
            // like an NBD client: ask again from where the last answer stopped
            while (off < end) {
                List<long[]> extents = new ArrayList<>();
                device.extents(off, end - off, (o, l, f) -> extents.add(new long[] {o, l, f}));
                assertTrue(!extents.isEmpty(), "extents(" + off + ", " + (end - off) + ") reported nothing");
                long expect = off;
                for (long[] e : extents) {
                    assertEquals(expect, e[0], "extents must be in order and without gaps");
                    assertTrue(e[1] > 0, "an extent must not be empty");
                    assertTrue(e[0] + e[1] <= end, "an extent must not reach past the range asked for");
                    if ((e[2] & BlockDevice.ExtentSink.ZERO) != 0) {
                        assertTrue(isZero(model, (int) e[0], (int) e[1]),
                                "extent [" + e[0] + ", +" + e[1] + ") is reported ZERO but holds data");
                    }
                    expect = e[0] + e[1];
                }
                off = expect;
            }
        }
        verifyAgainstModel();
    }

}
