package dev.strata.core.internal.config;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SourceFileTest {
    @TempDir
    Path dir;

    @Test
    void aFileThatIsThereIsNotGone() throws Exception {
        Path f = Files.writeString(dir.resolve("dev.strata.device-a.cfg"), "name=a\n");
        assertEquals(Optional.empty(), SourceFile.gone(f.toUri().toString(), null));
    }

    @Test
    void aDeletedFileIsGone() {
        Path f = dir.resolve("dev.strata.device-a.cfg");
        assertEquals(Optional.of("dev.strata.device-a.cfg"), SourceFile.gone(f.toUri().toString(), dir.toString()));
    }

    @Test
    void aMovedDistributionStillHasItsFileInTheWatchedDirectory() throws Exception {
        Path moved = Files.createDirectories(dir.resolve("new/deploy"));
        Files.writeString(moved.resolve("dev.strata.device-a.cfg"), "name=a\n");
        String old = dir.resolve("old/deploy/dev.strata.device-a.cfg").toUri().toString();
        assertEquals(Optional.empty(), SourceFile.gone(old, moved.toString()));
        assertEquals(Optional.of("dev.strata.device-a.cfg"), SourceFile.gone(old, dir.resolve("elsewhere").toString()));
    }

    @Test
    void notMadeFromAFileIsKept() {
        assertEquals(Optional.empty(), SourceFile.gone(null, null));
        assertEquals(Optional.empty(), SourceFile.gone("", null));
        assertEquals(Optional.empty(), SourceFile.gone("http://example.org/x.cfg", null));
        assertEquals(Optional.empty(), SourceFile.gone("not a url", null));
    }
}
