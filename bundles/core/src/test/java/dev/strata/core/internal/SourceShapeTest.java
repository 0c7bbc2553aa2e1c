package dev.strata.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.testsupport.source.SourceShape;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * No cycle between the core bundle's packages, kept from creeping back: {@code internal} once used
 * {@code command} (for {@code Render}'s sizes and labels) and {@code config} (to build
 * {@code ConfigAdminStore}) while both used it back. The rule: {@code internal} is the manager and
 * uses none of the packages around it; {@code command}, {@code config}, {@code jmx} and
 * {@code linear} may use {@code internal}, and {@code internal.text} uses nothing of core. Reads the
 * sources from the module directory, where Surefire runs; the line limit is kept repository-wide
 * by the integration tests' {@code SourceShapeTest}.
 */
class SourceShapeTest {
    private static final Path MAIN = Path.of("src/main/java");

    @Test
    void packagesFormNoCycle() throws IOException {
        List<Path> files = SourceShape.sources(MAIN);
        assertTrue(files.size() > 20, "the sources were found under " + MAIN.toAbsolutePath());
        assertEquals(List.of(), SourceShape.packageCycle(files, "dev.strata.core"), "a package cycle");
    }
}
