package dev.strata.core.internal.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Hashtable;
import java.util.Map;
import java.util.Properties;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.strata.core.internal.DeviceDefinition;

/**
 * {@link TornRead} on real bytes: a {@code .cfg} over 8 KiB (a long comment first, as a user may
 * write), read back cut where FileInstall's writer hands the file its first 8192 bytes, is torn;
 * a user's edit of a large or a small file, and reads that are not a cut of the last valid
 * definition are not.
 */
class TornReadTest {
    @TempDir
    Path dir;
    /** The largest size the store saw its file at: over 8 KiB (the files here are). */
    private static final long LARGE = 9000;

    private static final String PATH = "/srv/strata/images/" + "very-long-directory-name/".repeat(8) + "backing0.img";
    private final DeviceDefinition last = new DeviceDefinition("backing0", "tfile",
            Map.of("path", PATH, "size", "1M"), "5b0e3c52-0000-4000-8000-000000000001", Map.of());

    /** The file as FileInstall writes {@link #last}, after a comment of {@code comment} bytes. */
    private static String file(int comment) {
        StringBuilder sb = new StringBuilder();
        while (sb.length() < comment) {
            sb.append("# notes on this device, kept by FileInstall when it writes the file back\n");
        }
        sb.setLength(comment);
        sb.setCharAt(comment - 1, '\n');
        return sb + "name = backing0\ntype = tfile\narg.path = " + PATH + "\narg.size = 1M\nid = 5b0e3c52-0000-4000-8000-000000000001\n";
    }

    /** What FileInstall's poll stores when it reads {@code content}: its keys, and the file's name. */
    private Hashtable<String, Object> read(String content, Path cfg) throws IOException {
        Properties p = new Properties();
        p.load(new StringReader(content));
        Hashtable<String, Object> h = new Hashtable<>();
        p.forEach((k, v) -> h.put((String) k, v));
        h.put(DefinitionCodec.FILEINSTALL_FILENAME, cfg.toUri().toString());
        h.put("service.pid", "dev.strata.device~backing0");
        return h;
    }

    private Path write(String content) throws IOException {
        Path cfg = dir.resolve("dev.strata.device-backing0.cfg");
        Files.writeString(cfg, content, StandardCharsets.UTF_8);
        return cfg;
    }

    @Test
    void aReadCutAtTheFirstWriteOfALargeFileIsTorn() throws IOException {
        // the cut falls inside arg.path (comment + name + type: the path starts before 8192)
        String full = file(8100);
        Path cfg = write(full); // the write went on: the file is complete by the time the update is stored
        Hashtable<String, Object> cut = read(full.substring(0, TornRead.WRITE_CHUNK), cfg);
        assertTrue(String.valueOf(cut.get("arg.path")).length() < PATH.length(), "the cut is inside the path: " + cut);
        assertTrue(TornRead.isTorn(cut, last, LARGE));
        // cut after whole keys: the size and the id are missing
        String later = file(8192 - "name = backing0\ntype = tfile\narg.path = ".length() - PATH.length() - 1);
        cfg = write(later);
        cut = read(later.substring(0, TornRead.WRITE_CHUNK), cfg);
        assertFalse(cut.containsKey("arg.size"), String.valueOf(cut));
        assertTrue(TornRead.isTorn(cut, last, LARGE));
        // cut inside a key's name: "arg.si" with no value
        String inKey = file(8192 - "name = backing0\ntype = tfile\narg.path = ".length() - PATH.length() - 1 - "arg.si".length());
        cfg = write(inKey);
        cut = read(inKey.substring(0, TornRead.WRITE_CHUNK), cfg);
        assertEquals("", cut.get("arg.si"), String.valueOf(cut));
        assertTrue(TornRead.isTorn(cut, last, LARGE));
    }

    @Test
    void aCutReadTheManagerStampedAnIdentityIntoIsTornToo() throws IOException {
        // in a real Felix the manager's delivery read the cut one before this judgement and stamped an id into it
        DeviceDefinition noId = new DeviceDefinition("backing0", "tfile", Map.of("path", PATH, "size", "1M"));
        String full = file(8100);
        Path cfg = write(full);
        Hashtable<String, Object> cut = read(full.substring(0, TornRead.WRITE_CHUNK), cfg);
        cut.put("id", "0b6a6f4e-0000-4000-8000-000000000002");
        assertTrue(TornRead.isTorn(cut, noId, LARGE));
    }

    @Test
    void aWriteStalledAtTheBufferEndIsTornToo() throws IOException {
        String full = file(8100);
        String prefix = full.substring(0, TornRead.WRITE_CHUNK);
        Path cfg = write(prefix); // the file holds exactly the read: its writer has not written the rest yet
        assertTrue(TornRead.isTorn(read(prefix, cfg), last, LARGE));
    }

    @Test
    void aUsersEditThatDeletedTheLastLinesIsNotTorn() throws IOException {
        String edited = file(9000).replace("arg.size = 1M\nid = 5b0e3c52-0000-4000-8000-000000000001\n", "");
        Path cfg = write(edited); // the file holds the edit
        assertFalse(TornRead.isTorn(read(edited, cfg), last, LARGE));
    }

    @Test
    void aSmallFileIsNeverTorn() throws IOException {
        String full = file(200);
        String edited = full.substring(0, full.indexOf("arg.size"));
        Path cfg = write(edited);
        assertFalse(TornRead.isTorn(read(edited, cfg), last, full.length()), "the user's edit on disk");
        write("");
        assertFalse(TornRead.isTorn(read(edited, cfg), last, full.length()), "not on disk: still never over 8 KiB");
    }

    @Test
    void aReadWhileTheNextWriteBackHasTruncatedTheFileIsTorn() throws IOException {
        // seen with the real FileInstall: its next write-back had emptied the file when the cut read was stored
        String full = file(8100);
        Path cfg = write("");
        assertTrue(TornRead.isTorn(read(full.substring(0, TornRead.WRITE_CHUNK), cfg), last, LARGE));
    }

    @Test
    void readsThatAreNoCutOfTheLastDefinitionAreNotTorn() throws IOException {
        String full = file(8100);
        Path cfg = write(full);
        assertFalse(TornRead.isTorn(read(full, cfg), last, LARGE), "the whole definition");
        assertFalse(TornRead.isTorn(read(full.replace("arg.size = 1M", "arg.size = 2M"), cfg), last, LARGE), "a changed value");
        assertFalse(TornRead.isTorn(read(full + "arg.fail = write\n", cfg), last, LARGE), "a key added");
        assertFalse(TornRead.isTorn(read("# only a comment\n", cfg), last, LARGE), "empty: the emptied case");
        assertFalse(TornRead.isTorn(read(full.substring(0, TornRead.WRITE_CHUNK), cfg), null, LARGE), "no valid one before");
        Files.delete(cfg);
        assertFalse(TornRead.isTorn(read(full.substring(0, TornRead.WRITE_CHUNK), cfg), last, LARGE), "its file deleted");
    }
}
