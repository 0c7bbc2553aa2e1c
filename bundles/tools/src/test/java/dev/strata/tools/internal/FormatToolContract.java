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
import org.junit.jupiter.api.Test;

/**
 * The tool's promises, for each format, on images made by the real target: clean, dirty, after
 * power cuts; every metadata byte damaged is detected; repair then opens and every block reads
 * what it read before the damage; writeback leaves the backing device as the target's own would.
 */
abstract class FormatToolContract {
    abstract CacheFormat format();

    /** Byte offsets of the live metadata of an image (every byte a damaged copy must be detected at). */
    abstract List<Long> metadataBytes(Images.Pair p) throws Exception;

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
        assertEquals("", check.out());
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
    void everyMetadataByteDamagedIsDetectedAndRepairedWithoutLoss() throws Exception {
        Images.Pair p = dirty();
        byte[] before = Images.contents(format(), p);
        List<Long> bytes = metadataBytes(p);
        assertTrue(bytes.size() > 100, "metadata bytes: " + bytes.size());
        CrashableDevice base = p.cacheDevice();
        List<Long> missed = new ArrayList<>();
        int repaired = 0;
        for (int i = 0; i < bytes.size(); i++) {
            long at = bytes.get(i);
            byte flipped = (byte) (p.cache()[(int) at] ^ (1 << (i % 8)));
            Overlay damaged = new Overlay(base);
            damaged.patch(at, new byte[] {flipped});
            if (format().scan(damaged).problems().isEmpty()) {
                missed.add(at);
                continue;
            }
            if (i % 29 == 0) { // repair and reopen: every 29th damaged byte (each costs a copy of the image)
                byte[] img = p.cache().clone();
                img[(int) at] = flipped;
                CrashableDevice cache = CrashableDevice.ofImage("cache", img, 512);
                Images.Run r = Images.run(out -> Tool.repair(format(), cache, out));
                assertEquals(0, r.status(), "byte " + at + ": " + r.out());
                assertTrue(r.out().contains("nothing was lost"), "byte " + at + ": " + r.out());
                assertArrayEquals(before, Images.contents(format(), new Images.Pair(cache.durableImage(), p.backing())),
                        "after repairing byte " + at);
                repaired++;
            }
        }
        assertEquals(List.of(), missed, "damaged bytes not detected");
        assertTrue(repaired > 3, "repaired " + repaired);
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
