package dev.strata.driver.support.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.strata.api.InvalidArgumentException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ImageClaimsTest {
    @TempDir
    Path dir;

    private Path image(String name) throws IOException {
        Path p = dir.resolve(name);
        Files.write(p, new byte[4096]);
        return p;
    }

    private static void assertRefused(Path other, String holder) {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                () -> ImageClaims.claim("file", "dup4", other));
        assertEquals("file: " + other + " is already open as device '" + holder + "'; one image file can back one device",
                e.getMessage());
    }

    @Test
    void theSamePathTwiceIsRefusedAndFreeAgainAfterRelease() throws IOException {
        Path p = image("a.img");
        ImageClaims.Claim c = ImageClaims.claim("file", "cache0", p);
        assertRefused(p, "cache0");
        c.release();
        ImageClaims.claim("file", "dup4", p).release();
    }

    @Test
    void aSymlinkAHardLinkAndARelativePathAreTheSameFile() throws IOException {
        Path p = image("b.img");
        Path sym = Files.createSymbolicLink(dir.resolve("sym.img"), p);
        Path hard = Files.createLink(dir.resolve("hard.img"), p);
        Path relative = Paths.get("").toAbsolutePath().relativize(p);
        ImageClaims.Claim c = ImageClaims.claim("file", "cache0", p);
        try {
            assertRefused(sym, "cache0");
            assertRefused(hard, "cache0");
            assertRefused(relative, "cache0");
            assertRefused(dir.resolve("x").resolve("..").resolve("b.img"), "cache0");
        } finally {
            c.release();
        }
    }

    @Test
    void releaseIsIdempotentAndOnlyReleasesItsOwnClaim() throws IOException {
        Path p = image("c.img");
        ImageClaims.Claim first = ImageClaims.claim("file", "one", p);
        first.release();
        ImageClaims.Claim second = ImageClaims.claim("file", "two", p);
        first.release(); // a stale release must not free the second holder's claim
        assertRefused(p, "two");
        second.release();
    }

    @Test
    void anotherFileIsNotRefused() throws IOException {
        ImageClaims.Claim a = ImageClaims.claim("file", "a", image("d.img"));
        ImageClaims.Claim b = ImageClaims.claim("file", "b", image("e.img"));
        a.release();
        b.release();
    }

    @Test
    void aRefusedPrepareGrowsNothingAndAFileItCreatesIsClaimed() throws IOException {
        Path p = image("f.img");
        ImageClaims.Claim held = ImageClaims.claim("file", "cache0", p);
        FileSpec grow = FileSpec.parse("file", Map.of("path", p.toString(), "size", "1M", "create", "true"));
        assertThrows(InvalidArgumentException.class, () -> grow.prepareClaimed(grow.check(), "dup4"));
        assertEquals(4096, Files.size(p), "a refused device must not grow the live image");
        held.release();

        Path fresh = dir.resolve("new.img");
        FileSpec create = FileSpec.parse("file", Map.of("path", fresh.toString(), "size", "64k", "create", "true"));
        ImageClaims.Claim c = create.prepareClaimed(create.check(), "new0");
        assertEquals(65536, Files.size(fresh));
        assertRefused(fresh, "new0");
        c.release();
        ImageClaims.claim("file", "again", fresh).release();
    }

    @Test
    void noClaimIsLeftInTheSystemPropertiesAfterRelease() throws IOException {
        Path p = image("g.img");
        ImageClaims.claim("file", "x", p).release();
        assertFalse(System.getProperties().containsKey(ImageClaims.PREFIX + ImageClaims.identity(p)));
    }

    @Test
    void aPrepareThatFailsAfterTheClaimReleasesIt() throws IOException {
        Path notAFile = Files.createDirectory(dir.resolve("dir.img")); // opening it "rw" fails, even for root
        FileSpec spec = FileSpec.parse("file", Map.of("path", notAFile.toString()));
        assertThrows(dev.strata.api.DeviceIOException.class,
                () -> spec.prepareClaimed(new FileSpec.Plan(8192, false, true), "broken"));
        ImageClaims.claim("file", "next", notAFile).release(); // not refused: the failed open released it
    }
}
