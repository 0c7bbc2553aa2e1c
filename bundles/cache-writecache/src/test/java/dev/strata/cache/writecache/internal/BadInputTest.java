package dev.strata.cache.writecache.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.Claim;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Target;
import dev.strata.cache.writecache.internal.format.Crc;
import dev.strata.cache.writecache.internal.io.Options;
import dev.strata.cache.writecache.internal.io.WritecacheSubject;
import dev.strata.testsupport.crash.CrashableDevice;
import dev.strata.testsupport.target.SimpleTargetContext;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Every mistake gets one clear line, and changes nothing on either device unless format=true. */
class BadInputTest {
    final WritecacheFactory factory = new WritecacheFactory(Options.defaults().manual());
    CrashableDevice backing = new CrashableDevice("slow", 1 << 20, 512);
    CrashableDevice cache = new CrashableDevice("fast", WritecacheSubject.cacheBytes(32, 4096), 512);

    Target create(String args) throws IOException {
        return factory.create(SimpleTargetContext.of("wc0", args).with("slow", backing).with("fast", cache));
    }

    /** The call fails with one line, no class names, and neither device changed. */
    String refused(String args) {
        byte[] b = backing.currentImage();
        byte[] c = cache.currentImage();
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> create(args).close());
        String m = e.getMessage();
        assertFalse(m.contains("\n"), m);
        assertFalse(m.contains("Exception"), m);
        assertTrue(m.startsWith("writecache"), m);
        assertArrayEquals(b, backing.currentImage(), "backing changed by: " + args);
        assertArrayEquals(c, cache.currentImage(), "cache changed by: " + args);
        return m;
    }

    @Test
    void argumentsAreCheckedBeforeAnyDeviceIsTouched() {
        assertTrue(refused("backing=slow cache=fast block_size=1024").contains("use 512 or 4096"));
        // one answer for every unsupported block size, not "out of range; allowed 512 to 4096" above 4096
        assertEquals("writecache: block_size=8192 is not supported; use 512 or 4096",
                refused("backing=slow cache=fast block_size=8192"));
        assertEquals("writecache: block_size=256 is not supported; use 512 or 4096",
                refused("backing=slow cache=fast block_size=256"));
        assertTrue(refused("backing=slow cache=fast low_watermark=60 high_watermark=50").contains("must not exceed"));
        assertTrue(refused("backing=slow cache=fast high_watermark=101").contains("out of range"));
        assertTrue(refused("backing=slow cache=fast writeback_batch=0").contains("out of range"));
        assertTrue(refused("backing=slow cache=fast autocommit_blocks=x").contains("not a whole number"));
        assertTrue(refused("backing=slow cache=fast cleaner=maybe").contains("not a boolean"));
        assertTrue(refused("backing=slow cache=fast pause_writeback=3600001").contains("out of range"));
        assertTrue(refused("backing=slow cache=fast writeback_threshold=101").contains("out of range"));
        assertTrue(refused("backing=slow cache=fast writeback.controller=a/b").contains("not a controller name"));
        assertTrue(refused("backing=slow cache=fast speed=11").contains("unknown argument"));
        assertTrue(refused("backing=slow").contains("missing argument 'cache"));
        assertTrue(refused("backing=fast cache=fast").contains("same device"));
    }

    /** A whole number beyond a long is out of range like any other, with the range (every numeric tunable). */
    @Test
    void aNumberBeyondALongIsOutOfRangeNotNotANumber() {
        assertEquals("writecache: autocommit_time=99999999999999999999 is out of range; allowed 0 to 3600000",
                refused("backing=slow cache=fast autocommit_time=99999999999999999999"));
        for (String k : java.util.List.of("high_watermark", "low_watermark", "writeback_batch", "autocommit_blocks",
                "autocommit_time", "max_age", "pause_writeback", "writeback_threshold")) {
            for (String v : java.util.List.of("99999999999999999999", "-99999999999999999999")) {
                String m = refused("backing=slow cache=fast " + k + "=" + v);
                assertTrue(m.startsWith("writecache: " + k + "=" + v + " is out of range; allowed "), m);
            }
        }
    }

    @Test
    void aCacheSizeTooSmallQuotesCacheSizeAndTheDevice() {
        cache = new CrashableDevice("fast", 16 << 20, 512);
        assertEquals("writecache: cache_size=4K gives 4.0 KiB (of the cache device's 16.0 MiB), too little for one slot"
                + " of 4 KiB; at least 12 KiB are needed; give a larger cache_size (at most 16.0 MiB)",
                refused("backing=slow cache=fast cache_size=4K"));
    }

    /** Backing 6,656 bytes, cache blocks of 4096: 4096 does not divide it, 512 is below the cache's blocks. */
    @Test
    void noBlockSizeFitsIsOneLine() {
        backing = new CrashableDevice("slow", 6656, 512);
        cache = new CrashableDevice("fast", 1 << 20, 4096);
        String expected = "writecache: the backing device's size 6.5 KiB (6,656 bytes) is not a multiple of the cache device's"
                + " block size 4096: writecache cannot cache it (its blocks are 512 or 4096 bytes, at least either device's"
                + " block size); use a backing device whose size is a multiple of 4096, or a cache device with 512-byte blocks";
        assertEquals(expected, refused("backing=slow cache=fast"));
        assertEquals(expected, refused("backing=slow cache=fast block_size=512"));
        assertEquals(expected, refused("backing=slow cache=fast block_size=4096"));
        // one that fits is still named
        cache = new CrashableDevice("fast", 1 << 20, 512);
        assertEquals("writecache: the backing device's size 6.5 KiB (6,656 bytes) is not a multiple of block_size=4096;"
                + " use block_size=512", refused("backing=slow cache=fast"));
    }

    @Test
    void blockSizeSmallerThanADevicesIsRefused() {
        backing = new CrashableDevice("slow", 1 << 20, 4096);
        assertEquals("writecache: block_size=512 is smaller than the backing device's block size 4096; use block_size=4096",
                refused("backing=slow cache=fast block_size=512"));
    }

    @Test
    void aCacheTooSmallForOneSlotIsRefused() {
        cache = new CrashableDevice("fast", 8192, 512);
        assertEquals("writecache: the cache device has 8.0 KiB, too little for one slot of 4 KiB; at least 12 KiB are "
                + "needed; use a larger cache device", refused("backing=slow cache=fast"));
    }

    @Test
    void foreignDataAnotherPolicyAndAnotherVersionAreRefusedUnlessFormatIsGiven() throws IOException {
        byte[] junk = new byte[4096];
        new Random(1).nextBytes(junk);
        cache.write(0, ByteBuffer.wrap(junk), 0);
        assertTrue(refused("backing=slow cache=fast").contains("not a Strata cache; pass format=true"));
        try (Target t = create("backing=slow cache=fast format=true")) {
            assertEquals("32", t.status().get("capacity_blocks"));
        }
    }

    @Test
    void aDamagedSuperblockPointsToRepairBeforeFormat() throws IOException {
        create("backing=slow cache=fast").close(); // blank: formatted
        ByteBuffer sb = ByteBuffer.allocate(4096);
        cache.read(0, sb);
        sb.put(100, (byte) (sb.get(100) ^ 1)); // the CRC no longer matches
        cache.write(0, sb.clear(), 0);
        String r = refused("backing=slow cache=fast");
        assertTrue(r.startsWith("writecache: the cache device's superblock is corrupt (CRC mismatch); its dirty "
                + "blocks may still be saved"), r);
        assertTrue(r.contains("run strata-tool check, then strata-tool repair"), r);
        assertTrue(r.indexOf("strata-tool repair") < r.indexOf("format=true"), r);
    }

    @Test
    void anotherPolicysSuperblockIsNamed() throws IOException {
        create("backing=slow cache=fast").close(); // blank: formatted
        ByteBuffer sb = ByteBuffer.allocate(4096);
        cache.read(0, sb);
        sb.put(16, "writeboost".getBytes());
        sb.order(ByteOrder.LITTLE_ENDIAN).putInt(8, Crc.of(sb, 12, 4096 - 12));
        cache.write(0, sb.clear(), 0);
        assertEquals("writecache: the cache device is formatted for the 'writeboost' policy, not writecache;"
                + " pass format=true to format it (its contents are lost)", refused("backing=slow cache=fast"));
        sb.put(16, "writecache".getBytes());
        sb.order(ByteOrder.LITTLE_ENDIAN).putInt(12, 9);
        sb.order(ByteOrder.LITTLE_ENDIAN).putInt(8, Crc.of(sb, 12, 4096 - 12));
        cache.write(0, sb.clear(), 0);
        assertTrue(refused("backing=slow cache=fast").contains("format version 9; this bundle reads version 1"));
        try (Target t = create("backing=slow cache=fast format=true")) {
            assertEquals("0", t.status().get("dirty_blocks"));
        }
    }

    @Test
    void aChangedBlockSizeOnReopenIsRefused() throws IOException {
        create("backing=slow cache=fast block_size=4096").close();
        assertEquals("writecache: the cache device was formatted with block_size=4096, not 512; drop block_size or use 4096",
                refused("backing=slow cache=fast block_size=512"));
        try (Target t = create("backing=slow cache=fast")) {
            assertEquals(4096, t.blockSize());
        }
    }

    @Test
    void anotherBackingDeviceIsRefused() throws IOException {
        try (Target t = create("backing=slow cache=fast")) {
            t.write(0, ByteBuffer.allocate(4096), 0);
        }
        backing = new CrashableDevice("slow", 2 << 20, 512);
        String m = refused("backing=slow cache=fast");
        assertTrue(m.startsWith("writecache: name the cache device's own backing device (1.0 MiB (1,048,576 bytes)) as"
                + " backing= to keep its dirty blocks, or pass format=true"), m);
        assertTrue(m.endsWith("it belongs to another backing device, not this one (2.0 MiB (2,097,152 bytes))"), m);
    }

    /** What cache:detach leaves (everything written back) loses nothing to a format, and the line says so. */
    @Test
    void aDetachedCacheOfAnotherBackingDeviceSaysFormatLosesNothing() throws IOException {
        try (Target t = create("backing=slow cache=fast")) {
            t.write(0, ByteBuffer.allocate(4096), 0);
            t.message("flush", "1");
            t.message("invalidate", "all");
        }
        backing = new CrashableDevice("slow", 2 << 20, 512);
        assertEquals("writecache: pass format=true to use this cache device here (nothing is lost): it was detached from"
                + " another backing device (1.0 MiB (1,048,576 bytes); this one: 2.0 MiB (2,097,152 bytes)) with every"
                + " block written back", refused("backing=slow cache=fast"));
    }

    /** The backing device's context with an identity, as the manager gives it. */
    Target createWithId(String args, String id) throws IOException {
        SimpleTargetContext c = SimpleTargetContext.of("wc0", args).with("slow", backing).with("fast", cache);
        return factory.create(new dev.strata.api.TargetContext() {
            @Override
            public String deviceName() {
                return c.deviceName();
            }

            @Override
            public java.util.Map<String, String> arguments() {
                return c.arguments();
            }

            @Override
            public dev.strata.api.BlockDevice lowerDevice(String name) {
                return c.lowerDevice(name);
            }

            @Override
            public String lowerDeviceId(String name) {
                return name.equals("slow") ? id : null;
            }
        });
    }

    /**
     * The same backing device (the same identity) at another size: the message says so, and that a
     * format loses the dirty blocks (a black-box trial got "belongs to another backing device … pass
     * format=true" after a reload had shrunk the backing device by 8 KiB).
     */
    @Test
    void theSameBackingDeviceAtAnotherSizeIsRefusedSayingItsSizeChanged() throws IOException {
        String id = "903c039d-ef62-417e-a34c-44ce763d1cd6";
        try (Target t = createWithId("backing=slow cache=fast", id)) {
            t.write(0, ByteBuffer.allocate(4096), 0);
            t.flush();
        }
        backing = new CrashableDevice("slow", (1 << 20) - 8192, 512);
        byte[] c = cache.currentImage();
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                () -> createWithId("backing=slow cache=fast", id).close());
        assertEquals("writecache: the backing device's size changed from 1.0 MiB (1,048,576 bytes) to 1016.0 KiB "
                + "(1,040,384 bytes) since the cache was formatted over it (the same device, id " + id + "); give the "
                + "backing device back its 1.0 MiB (1,048,576 bytes) to recover the cache, dirty blocks included, or "
                + "pass format=true to format it (its contents are lost, dirty blocks included)", e.getMessage());
        assertArrayEquals(c, cache.currentImage(), "a refused open writes nothing");
        // another identity is another device, as before
        assertTrue(assertThrows(InvalidArgumentException.class, () -> createWithId("backing=slow cache=fast",
                "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d").close()).getMessage().contains("belongs to another backing device"));
    }

    @Test
    void aValidCacheOfTheSameBackingIsNeverReformatted() throws IOException {
        ByteBuffer d = ByteBuffer.allocate(4096);
        new Random(4).nextBytes(d.array());
        try (Target t = create("backing=slow cache=fast format=true")) {
            t.write(8192, d.duplicate(), 0);
        }
        try (Target t = create("backing=slow cache=fast format=true")) {
            ByteBuffer r = ByteBuffer.allocate(4096);
            t.read(8192, r);
            assertArrayEquals(d.array(), r.array());
            assertEquals("1", t.status().get("dirty_blocks"));
        }
    }

    @Test
    void claimsAreExclusiveAndAWritecacheOfTheSameDevicesIsAdopted() {
        Map<String, String> a = Map.of("backing", "slow", "cache", "fast");
        assertEquals(Map.of("slow", Claim.EXCLUSIVE, "fast", Claim.EXCLUSIVE), factory.claims(a));
        assertTrue(factory.adopts("writecache", a, Map.of("backing", "slow", "cache", "fast", "high_watermark", "70")));
        assertFalse(factory.adopts("writeboost", a, a));
        assertFalse(factory.adopts("writecache", a, Map.of("backing", "slow", "cache", "other")));
        // a format erases the dirty slots: the old writecache must be drained, not adopted
        assertFalse(factory.adopts("writecache", a, Map.of("backing", "slow", "cache", "fast", "format", "true")));
        assertTrue(factory.adopts("writecache", a, Map.of("backing", "slow", "cache", "fast", "format", "false")));
    }
}
