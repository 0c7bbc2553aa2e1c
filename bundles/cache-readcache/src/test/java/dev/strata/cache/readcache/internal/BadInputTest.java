package dev.strata.cache.readcache.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.InvalidArgumentException;
import dev.strata.api.ReadCachePolicy;
import dev.strata.api.Target;
import dev.strata.readcache.policies.internal.LruPolicy;
import dev.strata.readcache.policies.internal.NHitPolicy;
import dev.strata.readcache.policies.internal.WTinyLfuPolicy;
import dev.strata.testsupport.crash.CrashableDevice;
import dev.strata.testsupport.target.SimpleTargetContext;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

/** Bad input through the factory and messages: one line naming what to do, nothing changed. */
class BadInputTest {
    final ReadcacheFactory factory = new ReadcacheFactory();
    final CrashableDevice origin = new CrashableDevice("o", 1 << 20, 4096);
    final CrashableDevice cache = new CrashableDevice("c", 8192 + 64 * 4096, 4096);

    BadInputTest() {
        factory.addPolicy(new LruPolicy(), Map.of(ReadCachePolicy.NAME, "lru"));
        factory.addPolicy(new NHitPolicy(), Map.of(ReadCachePolicy.NAME, "nhit"));
        factory.addPolicy(new WTinyLfuPolicy(), Map.of(ReadCachePolicy.NAME, "wtinylfu"));
    }

    Target create(String args) throws Exception {
        return factory.create(SimpleTargetContext.of("rc0", "origin=o cache=c " + args).with("o", origin).with("c", cache));
    }

    void refused(String args, String mustContain) throws Exception {
        byte[] before = cache.currentImage();
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> create(args), args);
        oneLine(e, mustContain);
        assertArrayEquals(before, cache.currentImage(), "the cache device is unchanged: " + args);
    }

    static void oneLine(Exception e, String mustContain) {
        String m = e.getMessage();
        assertFalse(m.contains("\n"), m);
        assertFalse(m.contains("Exception"), m);
        assertTrue(m.contains(mustContain), m);
    }

    @Test
    void unknownPolicyListsTheInstalledOnes() throws Exception {
        refused("policy=arc", "installed: lru, nhit, wtinylfu");
    }

    @Test
    void backingGivenForOriginIsNamed() {
        // writeboost's and writecache's word for it: a trial got only "missing argument 'origin=…'"
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                () -> factory.lowerDevices(Map.of("backing", "rlw", "cache", "c3")));
        assertEquals("readcache: its backing device is named origin=, not backing=; use origin=rlw", e.getMessage());
    }

    @Test
    void originEqualsCache() {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                () -> factory.lowerDevices(Map.of("origin", "o", "cache", "o")));
        oneLine(e, "same device");
    }

    @Test
    void aCacheTooSmallForItsBlockSizeSaysSoInIecUnits() throws Exception {
        refused("block_size=1M", "readcache: the cache device has 264.0 KiB, fewer than ");
        refused("block_size=1M", " blocks of 1 MiB; use a larger cache device or a smaller block_size");
    }

    /** cache_size= is what is too small, not the device: the line quotes both. */
    @Test
    void aCacheSizeTooSmallQuotesItAndTheDevice() throws Exception {
        refused("cache_size=8K", "readcache: cache_size=8K gives 8.0 KiB (of the cache device's 264.0 KiB), fewer than ");
        refused("cache_size=8K", " blocks of 4 KiB; give a larger cache_size (at most 264.0 KiB) or a smaller block_size");
    }

    /** readahead and sequential_cutoff take off for 0 (as write_promote does), and a bad value has the readcache: prefix. */
    @Test
    void sizesTakeOffAndBadOnesArePrefixed() throws Exception {
        try (Target t = create("readahead=off sequential_cutoff=OFF")) {
            assertEquals("0", t.status().get("readahead"));
            assertEquals("0", t.status().get("sequential_cutoff"));
            t.message("readahead", "64K");
            t.message("readahead", "off");
            assertEquals("0", t.status().get("readahead"));
            InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> t.message("readahead", "lots"));
            assertEquals("readcache: readahead=lots is not a size; use bytes or a number with k, M, G or T, or off", e.getMessage());
            e = assertThrows(InvalidArgumentException.class, () -> t.message("sequential_cutoff", "99999999999999999999"));
            assertEquals("readcache: sequential_cutoff=99999999999999999999 is out of range; allowed 0 bytes to 1 TiB",
                    e.getMessage());
            e = assertThrows(InvalidArgumentException.class, () -> t.message("readahead", "9999999999999999T"));
            assertEquals("readcache: readahead=9999999999999999T is out of range; allowed 0 bytes to 1 MiB", e.getMessage());
            assertEquals("0", t.status().get("readahead"), "nothing changed");
        }
    }

    /** Another origin: the advice first (a read cache loses nothing to format=true), then both devices. */
    @Test
    void anotherOriginPutsTheAdviceFirst() throws Exception {
        create("").close();
        CrashableDevice other = new CrashableDevice("o", 2 << 20, 4096);
        byte[] before = cache.currentImage();
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> factory.create(
                SimpleTargetContext.of("rc0", "origin=o cache=c").with("o", other).with("c", cache)));
        assertEquals("readcache: pass format=true to use this cache device over this origin (it holds only clean copies:"
                + " nothing is lost), or name its own origin: it belongs to another one (size 1.0 MiB (1,048,576 bytes);"
                + " this one: 2.0 MiB (2,097,152 bytes))", e.getMessage());
        assertArrayEquals(before, cache.currentImage());
    }

    @Test
    void blockSizeMismatchAndTunablesOutOfRange() throws Exception {
        create("block_size=8192").close();
        refused("block_size=4096", "block_size=8192");
        refused("block_size=3000", "out of range");
        refused("block_size=12288", "power of two");
        refused("sequential_cutoff=-1", "sequential_cutoff");
        refused("write_promote=maybe", "write_promote");
        refused("policy=nhit threshold=0", "threshold");
        refused("policy=lru no_such=1", "no_such");
    }

    @Test
    void writePromoteIsAnArgument() throws Exception {
        Target t = create("write_promote=on");
        assertTrue(t.status().get("write_promote").equals("true"));
        t.close();
    }

    @Test
    void cacheFormattedByAnotherPolicy() throws Exception {
        ByteBuffer sb = ByteBuffer.allocate(4096).order(ByteOrder.LITTLE_ENDIAN);
        sb.put(0, "STRATASB".getBytes(StandardCharsets.US_ASCII));
        sb.putInt(12, 1);
        sb.put(16, "writeboost".getBytes(StandardCharsets.US_ASCII));
        CRC32C c = new CRC32C();
        c.update(sb.duplicate().position(12));
        sb.putInt(8, (int) c.getValue());
        cache.write(0, sb, 0);
        refused("", "'writeboost' policy");
        create("format=true").close(); // and format=true takes it over
    }

    @Test
    void messagesRefuseBadValuesAndChangeNothing() throws Exception {
        Target t = create("");
        oneLine(assertThrows(InvalidArgumentException.class, () -> t.message("policy", "arc")), "installed: lru, nhit, wtinylfu");
        oneLine(assertThrows(InvalidArgumentException.class, () -> t.message("sequential_cutoff", "2T")), "out of range");
        oneLine(assertThrows(InvalidArgumentException.class, () -> t.message("bogus", "1")), "no tunable 'bogus'");
        oneLine(assertThrows(InvalidArgumentException.class, () -> t.message("mode", "writeback")), "not supported");
        oneLine(assertThrows(InvalidArgumentException.class, () -> t.message("write_promote", "2")), "write_promote");
        assertTrue(t.status().get("policy").equals("wtinylfu"));
        assertTrue(t.status().get("write_promote").equals("false"));
        assertTrue(t.status().get("sequential_cutoff").equals("4194304"));
        t.close();
    }
}
