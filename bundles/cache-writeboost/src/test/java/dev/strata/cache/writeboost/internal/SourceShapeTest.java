package dev.strata.cache.writeboost.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.testsupport.source.SourceShape;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The shape issue 10 asked of this bundle's sources, kept from creeping back: no file in
 * {@code src/main} over 600 lines (DESIGN.md §14: the facade once grew to 2,543 and later crept to
 * 605 again), and no cycle between its packages (once {@code daemon} and {@code io} used each
 * other). Reads the sources from the module directory, where Surefire runs; the repository-wide
 * line limit is kept by the integration tests' {@code SourceShapeTest}.
 */
class SourceShapeTest {
    private static final Path MAIN = Path.of("src/main/java");

    @Test
    void noSourceFileOver600Lines() throws IOException {
        List<Path> files = SourceShape.sources(MAIN);
        assertTrue(files.size() > 20, "the sources were found under " + MAIN.toAbsolutePath());
        assertEquals(List.of(), SourceShape.longerThan(MAIN, files, 600), "split these along their seams (one job per class)");
    }

    @Test
    void packagesFormNoCycle() throws IOException {
        assertEquals(List.of(), SourceShape.packageCycle(SourceShape.sources(MAIN), "dev.strata.cache.writeboost"),
                "a package cycle");
    }
}
