package dev.strata.tools.internal;

import dev.strata.tools.internal.format.*;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.CacheTarget;
import dev.strata.api.Target;
import dev.strata.testsupport.crash.CrashMode;
import dev.strata.testsupport.crash.CrashableDevice;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The tool's promises, for each format, on images made by the real target: clean, dirty, after
 * power cuts; every metadata byte damaged is detected; repair then opens and every block reads
 * what it read before the damage; writeback leaves the backing device as the target's own would.
 */
abstract class FormatToolContract {
    abstract CacheFormat format();

    /**
     * The live metadata structures of an image, as {offset, length}: every byte of each must be
     * detected when damaged (zero padding included: the check compares it in bulk).
     */
    abstract List<long[]> structures(Images.Pair p) throws Exception;

    /** Every byte of every structure. */
    final List<Long> metadataBytes(Images.Pair p) throws Exception {
        List<Long> out = new ArrayList<>();
        for (long[] s : structures(p)) {
            for (long i = 0; i < s[1]; i++) {
                out.add(s[0] + i);
            }
        }
        return out;
    }

    /** A crash-model image: power cut with a random subset of the unflushed writes kept. */
    Images.Pair crashed() throws Exception {
        return Images.make(format(), 11, 57, false, CrashMode.SUBSET);
    }

    /** What repair is told about how the device was built (as passing the backing device file does). */
    static Hints hints(Images.Pair p) {
        return new Hints(p.backing().length, 0);
    }

    /** A dirty image: written, flushed, power cut with every flushed write kept (nothing written back yet, or little). */
    Images.Pair dirty() throws Exception {
        return Images.make(format(), 7, 60, false, CrashMode.DROP_ALL);
    }

    @Test
    void cleanImageChecksCleanAndDumps() throws Exception {
        Images.Pair p = Images.make(format(), 1, 60, true, null);
        CrashableDevice cache = p.cacheDevice();
        assertEquals(format().name(), Formats.detect(cache).name());
        Images.Run check = Images.run(out -> Tool.check(format(), cache, out));
        assertEquals(0, check.status(), check.out());
        assertEquals("ok: the device holds a " + format().name() + " that checks clean (its superblock and all its "
                + "metadata read; " + dev.strata.cache.support.units.Iec.size(cache.size()) + "; nothing written)\n",
                check.out(), "one line: a clean check is not silence");
        Images.Run text = Images.run(out -> Tool.dump(format(), cache, false, out));
        assertEquals(0, text.status(), text.out());
        assertTrue(text.out().startsWith("policy: " + format().name() + "\n"), text.out());
        assertTrue(text.out().contains("cached_blocks: "), text.out());
        Images.Run json = Images.run(out -> Tool.dump(format(), cache, true, out));
        assertTrue(json.out().startsWith("{\"policy\":\"" + format().name() + "\""), json.out());
        assertTrue(json.out().trim().endsWith("\"problems\":[]}"), json.out());
    }

    @Test
    void dirtyAndCrashImagesCheckClean() throws Exception {
        CrashMode[] modes = {CrashMode.DROP_ALL, CrashMode.KEEP_ALL, CrashMode.SUBSET, CrashMode.TORN};
        for (int seed = 0; seed < 12; seed++) {
            Images.Pair p = Images.make(format(), 100 + seed, 15 + 7 * seed, false, modes[seed % modes.length]);
            Images.Run check = Images.run(out -> Tool.check(format(), p.cacheDevice(), out));
            assertEquals(0, check.status(), "seed " + seed + ": " + check.out());
            Images.Run repair = Images.run(out -> Tool.repair(format(), p.cacheDevice(), out));
            assertEquals(0, repair.status(), repair.out());
            assertTrue(repair.out().startsWith("nothing to repair"), repair.out());
        }
    }

    @Test
    void everyMetadataByteFlippedIsDetectedAndRepairedWithoutLoss() throws Exception {
        for (Images.Pair p : List.of(dirty(), crashed())) {
            byte[] before = Images.contents(format(), p);
            List<Long> bytes = metadataBytes(p);
            assertTrue(bytes.size() > 4096, "metadata bytes: " + bytes.size());
            // every byte, on both cores: each flip is a one-byte overlay on the shared image (reads only). The
            // check must report it, and the repair it would write (the overlay's patches) must put back exactly
            // the bytes the image had, losing nothing
            List<String> wrong = java.util.Collections.synchronizedList(new ArrayList<>());
            List<Long> missed = java.util.stream.IntStream.range(0, bytes.size()).parallel().filter(i -> {
                long at = bytes.get(i);
                Findings found;
                try {
                    found = format().scan(new ImageDevice.Flipped(p.cache(), at, (byte) (1 << (i % 8))));
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
                if (found.problems().isEmpty()) {
                    return true;
                }
                boolean restores = found.dropped().isEmpty() && found.unrepairable() == null;
                boolean covers = false;
                for (java.util.Map.Entry<Long, byte[]> e : found.overlay().patches().entrySet()) {
                    long o = e.getKey();
                    byte[] v = e.getValue();
                    covers |= o <= at && at < o + v.length;
                    restores &= java.util.Arrays.equals(v, 0, v.length, p.cache(), (int) o, (int) o + v.length);
                }
                if (!restores || !covers) {
                    wrong.add("byte " + at + ": " + found.problems() + " dropped " + found.dropped());
                }
                return false;
            }).mapToObj(bytes::get).toList();
            assertEquals(List.of(), wrong.subList(0, Math.min(5, wrong.size())), wrong.size() + " repairs would not restore the image");
            int repaired = 0;
            for (int i = 0; i < bytes.size(); i += 211) { // the real target reopened over a repaired copy (each costs an open)
                long at = bytes.get(i);
                byte flipped = (byte) (p.cache()[(int) at] ^ (1 << (i % 8)));
                Findings found = format().scan(new ImageDevice.Flipped(p.cache(), at, (byte) (1 << (i % 8))));
                byte[] img = p.cache().clone();
                img[(int) at] = flipped;
                ImageDevice cache = new ImageDevice(img);
                Images.Run check = Images.run(out -> Tool.check(format(), cache, out));
                assertEquals(1, check.status(), "byte " + at);
                assertEquals(found.problems().size(), check.out().lines().count(), "one line per problem: " + check.out());
                Images.Run r = Images.run(out -> Tool.repair(format(), cache, out));
                assertEquals(0, r.status(), "byte " + at + ": " + r.out());
                assertTrue(r.out().contains("nothing was lost"), "byte " + at + ": " + r.out());
                assertArrayEquals(before, Images.contents(format(), new Images.Pair(img, p.backing())), "after repairing byte " + at);
                repaired++;
            }
            assertEquals(List.of(), missed, "damaged bytes not detected");
            assertTrue(repaired > 10, "repaired " + repaired);
        }
    }

    /** One multi-byte damage: a random run of random bytes, a zeroed sector, or a zeroed structure. */
    private static String damage(byte[] img, List<long[]> structures, Random r, int kind) {
        long[] s = structures.get(r.nextInt(structures.size()));
        int len = (int) s[1];
        switch (kind) {
            case 0: {
                int n = 2 + r.nextInt(Math.min(62, len - 1));
                int at = (int) s[0] + r.nextInt(len - n + 1);
                for (int i = 0; i < n; i++) {
                    img[at + i] = (byte) r.nextInt(256);
                }
                return n + " random bytes at " + at;
            }
            case 1: {
                int sectors = Math.max(1, len / 512);
                int at = (int) s[0] + 512 * r.nextInt(sectors);
                java.util.Arrays.fill(img, at, Math.min(at + 512, (int) (s[0] + len)), (byte) 0);
                return "the sector at " + at + " zeroed";
            }
            default:
                java.util.Arrays.fill(img, (int) s[0], (int) (s[0] + len), (byte) 0);
                return "the structure at " + s[0] + " (" + len + " bytes) zeroed";
        }
    }

    /**
     * The disk rule after a repair, against the model: every block reads what it read before the
     * damage, unless the repair said it dropped something; then a block may instead read one of
     * the values it held earlier (an older write, or the zeroes it started with), never anything else.
     */
    private static void assertDiskRule(Images.Pair p, byte[] before, byte[] after, String report, String what) {
        boolean dropped = report.contains("dropped: ");
        int changed = 0;
        for (long b = 0; b < before.length / 4096; b++) {
            int at = (int) (b * 4096);
            if (java.util.Arrays.equals(before, at, at + 4096, after, at, at + 4096)) {
                continue;
            }
            changed++;
            assertTrue(dropped, what + ": block " + b + " changed but the repair reported nothing dropped: " + report);
            boolean earlier = Mend.firstNonZero(after, at, at + 4096) < 0;
            for (byte[] v : p.history().getOrDefault(b, List.of())) {
                earlier |= java.util.Arrays.equals(v, 0, 4096, after, at, at + 4096);
            }
            assertTrue(earlier, what + ": block " + b + " reads a value it never held");
        }
        if (report.contains("nothing was lost")) {
            assertEquals(0, changed, what);
        }
    }

    @Test
    void multiByteDamageIsRepairedLosingOnlyWhatIsUnreadable() throws Exception {
        int detected = 0;
        int lossy = 0;
        int cases = 0;
        for (Images.Pair p : List.of(dirty(), crashed())) {
            byte[] before = Images.contents(format(), p);
            List<long[]> structures = structures(p);
            Random r = new Random(42);
            for (int c = 0; c < 36; c++) {
                byte[] img = p.cache().clone();
                String what = damage(img, structures, r, c % 3);
                if (java.util.Arrays.equals(img, p.cache())) {
                    continue;
                }
                cases++;
                ImageDevice cache = new ImageDevice(img);
                Images.Run check = Images.run(out -> Tool.check(format(), cache, out));
                Images.Run repair = Images.run(out -> Tool.repair(format(), cache, hints(p), out));
                assertEquals(0, repair.status(), what + ": " + repair.out());
                Images.Run again = Images.run(out -> Tool.check(format(), cache, out));
                assertEquals(0, again.status(), what + ": after repair: " + again.out());
                byte[] after = Images.contents(format(), new Images.Pair(img, p.backing()));
                if (check.status() == 0) {
                    // undetected: damage the format cannot tell from a power cut's torn tail (or harmless): it
                    // must read as such, every block an acknowledged value
                    assertDiskRule(p, before, after, "dropped: (undetected)", what);
                    continue;
                }
                detected++;
                assertEquals(1, check.status(), what);
                assertFalse(check.out().isEmpty(), what);
                assertDiskRule(p, before, after, repair.out(), what);
                lossy += repair.out().contains("dropped: ") ? 1 : 0;
                if (c % 4 == 0 && format().holdsDirtyData()) {
                    assertWritebackAsTheTargetWould(img, p.backing(), what);
                }
            }
        }
        assertTrue(detected > cases * 3 / 4, "detected " + detected + " of " + cases);
        assertTrue(lossy > 0 || !format().holdsDirtyData(), "no case lost anything: the damage is too mild to test dropping");
    }

    @Test
    void zeroedSuperblockIsRebuiltFromTheArgumentsOrRefusedWithOneLine() throws Exception {
        Images.Pair p = dirty();
        byte[] before = Images.contents(format(), p);
        byte[] img = p.cache().clone();
        java.util.Arrays.fill(img, 0, 4096, (byte) 0);
        byte[] zeroed = img.clone();
        ImageDevice cache = new ImageDevice(img);
        Images.Run refused = Images.run(out -> Tool.repair(format(), cache, out));
        assertEquals(1, refused.status(), refused.out());
        assertEquals(1, refused.out().lines().count(), refused.out());
        assertTrue(refused.out().contains("pass the "), refused.out());
        assertArrayEquals(zeroed, cache.image, "nothing was written");
        Images.Run r = Images.run(out -> Tool.repair(format(), cache, hints(p), out));
        assertEquals(0, r.status(), r.out());
        assertTrue(r.out().contains("superblock rebuilt: "), r.out());
        assertDiskRule(p, before, Images.contents(format(), new Images.Pair(img, p.backing())), r.out(), "superblock zeroed");
    }

    private void assertWritebackAsTheTargetWould(byte[] cacheImage, byte[] backingImage, String what) throws Exception {
        ImageDevice cacheA = new ImageDevice(cacheImage.clone());
        ImageDevice backingA = new ImageDevice(backingImage.clone());
        Images.Run r = Images.run(out -> Tool.writeback(format(), cacheA, backingA, out));
        assertEquals(0, r.status(), what + ": " + r.out());
        ImageDevice cacheB = new ImageDevice(cacheImage.clone());
        ImageDevice backingB = new ImageDevice(backingImage.clone());
        Target t = Images.open(format(), cacheB, backingB, "");
        ((CacheTarget) t).writebackAll((d, w) -> { });
        t.flush();
        t.close();
        assertArrayEquals(backingB.image, backingA.image, what + ": the tool's writeback differs from the target's");
    }

    @Test
    void writebackLeavesTheBackingDeviceAsTheTargetWould() throws Exception {
        Images.Pair p = dirty();
        byte[] contents = Images.contents(format(), p);
        CrashableDevice cacheA = p.cacheDevice();
        CrashableDevice backingA = p.backingDevice();
        Images.Run r = Images.run(out -> Tool.writeback(format(), cacheA, backingA, out));
        assertEquals(0, r.status(), r.out());

        CrashableDevice cacheB = p.cacheDevice();
        CrashableDevice backingB = p.backingDevice();
        Target t = Images.open(format(), cacheB, backingB, "");
        ((CacheTarget) t).writebackAll((d, w) -> { });
        t.flush();
        t.close();
        assertArrayEquals(backingB.durableImage(), backingA.durableImage(), "the tool's writeback differs from the target's");
        assertArrayEquals(contents, backingA.durableImage(), "the backing device does not hold what the cache read as");
        if (format().holdsDirtyData()) {
            assertFalse(java.util.Arrays.equals(p.backing(), backingA.durableImage()), "nothing was dirty");
        }
        Images.Run again = Images.run(out -> Tool.check(format(), cacheA, out));
        assertEquals(0, again.status(), again.out());
    }
}
