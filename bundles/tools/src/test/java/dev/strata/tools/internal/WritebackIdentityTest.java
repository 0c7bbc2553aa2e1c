package dev.strata.tools.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.BlockDevice;
import dev.strata.api.Target;
import dev.strata.api.TargetContext;
import dev.strata.cache.writecache.internal.WritecacheFactory;
import dev.strata.driver.file.internal.FileTargetFactory;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * writeback onto a file that is not the cache's backing device (the right size, another device)
 * is refused before anything is written: it would take the dirty blocks and leave the cache clean,
 * so the real backing device would read stale data. A cache made by the real writecache target
 * over real files whose backing device has an identity, as the device manager gives it.
 */
class WritebackIdentityTest {
    static final String BACKING_ID = "0b0b0b0b-1111-2222-3333-444444444444";
    static final String OTHER_ID = "0c0c0c0c-1111-2222-3333-444444444444";

    @TempDir
    Path home;

    record Out(int status, String out, String err) {
    }

    Out tool(String... args) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        int s = Main.run(args, home, new PrintStream(o, true, StandardCharsets.UTF_8), new PrintStream(e, true, StandardCharsets.UTF_8));
        return new Out(s, o.toString(StandardCharsets.UTF_8), e.toString(StandardCharsets.UTF_8));
    }

    /** A writecache over var/backing.img holding 8 dirty blocks of 0x5a; its backing device has BACKING_ID. */
    Path dirtyCache() throws Exception {
        Path var = Files.createDirectories(home.resolve("var"));
        Path cacheFile = var.resolve("cache.img");
        Path backingFile = var.resolve("backing.img");
        BlockDevice cache = file(cacheFile, "4M");
        BlockDevice backing = file(backingFile, "16M");
        TargetContext ctx = new TargetContext() {
            @Override
            public String deviceName() {
                return "wc0";
            }

            @Override
            public Map<String, String> arguments() {
                return Map.of("backing", "backing", "cache", "cache");
            }

            @Override
            public BlockDevice lowerDevice(String name) {
                return name.equals("backing") ? backing : cache;
            }

            @Override
            public String lowerDeviceId(String name) {
                return name.equals("backing") ? BACKING_ID : "0a0a0a0a-1111-2222-3333-444444444444";
            }
        };
        Target wc = new WritecacheFactory().create(ctx);
        ByteBuffer b = ByteBuffer.allocate(4096);
        for (int i = 0; i < 8; i++) {
            Arrays.fill(b.array(), (byte) 0x5a);
            b.clear();
            wc.write(i * 4096L, b, 0);
        }
        wc.flush();
        wc.close();
        cache.close();
        backing.close();
        return cacheFile;
    }

    static BlockDevice file(Path p, String size) throws Exception {
        return new FileTargetFactory().create(new Context(p.getFileName().toString(),
                Map.of("path", p.toString(), "size", size, "create", "true"), Map.of()));
    }

    void storeDefinition(String name, String id, String path) throws Exception {
        Path dir = Files.createDirectories(home.resolve("var/config/dev/strata"));
        Files.writeString(dir.resolve("device%007e" + name + ".config"), String.join("\n",
                ":org.apache.felix.configadmin.revision:=L\"1\"",
                "arg.path=\"" + path + "\"",
                "id=\"" + id + "\"",
                "name=\"" + name + "\"",
                "service.factoryPid=\"dev.strata.device\"",
                "type=\"file\"", ""));
    }

    @Test
    void aFileThatIsAnotherStoredDeviceIsRefusedAndTheCacheStaysDirty() throws Exception {
        Path cache = dirtyCache();
        Path other = home.resolve("var/other.img");
        Files.write(other, new byte[16 << 20]); // the backing device's size, another device's data
        storeDefinition("backing0", BACKING_ID, "var/backing.img");
        storeDefinition("other", OTHER_ID, "var/other.img");
        byte[] cacheBefore = Files.readAllBytes(cache);

        Out refused = tool("writeback", cache.toString(), other.toString());
        assertEquals(2, refused.status(), refused.out() + refused.err());
        assertEquals(1, refused.err().lines().count(), refused.err());
        assertTrue(refused.err().contains("is device 'other' (id " + OTHER_ID + "), not this cache's backing device (id "
                + BACKING_ID + ", device 'backing0' of type file)"), refused.err());
        assertTrue(refused.err().endsWith("nothing was written\n"), refused.err());
        assertArrayEquals(new byte[16 << 20], Files.readAllBytes(other), "nothing was written to the wrong file");
        assertArrayEquals(cacheBefore, Files.readAllBytes(cache), "the cache still holds its dirty blocks");

        Out wb = tool("writeback", cache.toString(), home.resolve("var/backing.img").toString());
        assertEquals(0, wb.status(), wb.out() + wb.err());
        assertTrue(wb.out().startsWith("wrote back 8 dirty blocks"), wb.out());
        byte[] back = Files.readAllBytes(home.resolve("var/backing.img"));
        for (int i = 0; i < 8 * 4096; i++) {
            assertEquals((byte) 0x5a, back[i], "byte " + i + " written back");
        }
    }

    @Test
    void aFileNoDefinitionNamesNeedsTheIdentityConfirmed() throws Exception {
        Path cache = dirtyCache();
        Path copy = home.resolve("copy.img");
        Files.write(copy, new byte[16 << 20]);
        byte[] cacheBefore = Files.readAllBytes(cache);

        Out refused = tool("writeback", cache.toString(), copy.toString());
        assertEquals(2, refused.status(), refused.out() + refused.err());
        assertTrue(refused.err().contains("cannot tell whether it is this cache's backing device (id " + BACKING_ID + ")"), refused.err());
        assertTrue(refused.err().contains("run again with --backing-id=" + BACKING_ID), refused.err());
        Out wrongId = tool("writeback", cache.toString(), copy.toString(), "--backing-id=" + OTHER_ID);
        assertEquals(2, wrongId.status(), wrongId.err());
        assertTrue(wrongId.err().contains("--backing-id=" + OTHER_ID + " is not this cache's backing device identity"), wrongId.err());
        assertArrayEquals(new byte[16 << 20], Files.readAllBytes(copy));
        assertArrayEquals(cacheBefore, Files.readAllBytes(cache));

        Out confirmed = tool("writeback", cache.toString(), copy.toString(), "--backing-id=" + BACKING_ID);
        assertEquals(0, confirmed.status(), confirmed.out() + confirmed.err());
        assertEquals((byte) 0x5a, Files.readAllBytes(copy)[0]);
        Out misplaced = tool("check", cache.toString(), "--backing-id=" + BACKING_ID);
        assertEquals(2, misplaced.status(), misplaced.err());
    }
}
