package dev.strata.core.internal.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link AtomicFile} on a real directory: the file is replaced by a rename (a new inode), never
 * rewritten in place; a file deleted or changed after it was read is left as it is (a deleted one
 * is not created again); nothing of the temporary file stays behind.
 */
class AtomicFileTest {
    @TempDir
    Path dir;

    private Path file(String content) throws IOException {
        return Files.writeString(dir.resolve("dev.strata.device-x.cfg"), content);
    }

    private long entries() throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.count();
        }
    }

    @Test
    void aFileStillAsItWasReadIsReplacedByANewOne() throws IOException {
        Path f = file("name=x\n");
        AtomicFile.Seen seen = AtomicFile.seen(f);
        AtomicFile.write(f, "name=x\nid=1\n".getBytes(StandardCharsets.ISO_8859_1), seen);
        assertEquals("name=x\nid=1\n", Files.readString(f));
        assertNotEquals(seen.key(), AtomicFile.seen(f).key(), "a new inode: renamed over, not rewritten");
        assertEquals(1, entries(), "no temporary file left");
    }

    @Test
    void aFileDeletedAfterItWasReadIsNotCreatedAgain() throws IOException {
        Path f = file("name=x\n");
        AtomicFile.Seen seen = AtomicFile.seen(f);
        Files.delete(f); // the user's rm, while Strata prepares its write
        IOException e = assertThrows(IOException.class, () -> AtomicFile.write(f, "name=x\nid=1\n".getBytes(), seen));
        assertTrue(e.getMessage().contains("changed or deleted while it was being written"), e.getMessage());
        assertFalse(Files.exists(f));
        assertEquals(0, entries(), "no temporary file left");
    }

    @Test
    void aFileChangedAfterItWasReadKeepsTheChange() throws IOException {
        Path f = file("name=x\n");
        AtomicFile.Seen seen = AtomicFile.seen(f);
        Files.writeString(f, "name=x\ntype=memory\n"); // an editor's save in place
        Files.setLastModifiedTime(f, FileTime.fromMillis(seen.modified().toMillis() + 1000));
        assertThrows(IOException.class, () -> AtomicFile.write(f, "name=x\nid=1\n".getBytes(), seen));
        assertEquals("name=x\ntype=memory\n", Files.readString(f));
        assertEquals(1, entries());
    }

    @Test
    void deleteRemovesTheFileAndIsNothingForAMissingOne() throws IOException {
        Path f = file("name=x\n");
        AtomicFile.delete(f);
        assertFalse(Files.exists(f));
        AtomicFile.delete(f);
        assertEquals(0, entries());
    }

    @Test
    void leftoversOfACrashAreRemovedAndNothingElse() throws IOException {
        Path f = file("name=x\n");
        Files.writeString(dir.resolve(".dev.strata.device-x.cfg.0f1e" + AtomicFile.TMP_SUFFIX), "half");
        AtomicFile.removeLeftovers(dir);
        assertEquals(1, entries());
        assertTrue(Files.exists(f));
    }
}
