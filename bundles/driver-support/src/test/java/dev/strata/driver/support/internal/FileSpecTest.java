package dev.strata.driver.support.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** FileSpec on its own; the drivers' tests cover its checks through their factories. */
class FileSpecTest {
    @Test
    void relativePathsResolveAgainstTheWorkingDirectory() throws Exception {
        FileSpec spec = FileSpec.parse("file", Map.of("path", "var/disk0.img"));
        assertEquals(Path.of("").toAbsolutePath().resolve("var/disk0.img"), spec.path);
    }
}
