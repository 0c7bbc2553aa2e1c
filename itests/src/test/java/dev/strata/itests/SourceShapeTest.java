package dev.strata.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import dev.strata.testsupport.source.SourceShape;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.Test;

/**
 * DESIGN.md §14's "no source file over ~600 lines", held for every module's {@code src/main} at
 * 600 (files that crept past it, ZooKeeperLog at 604 and WriteboostCache at 605, were split along
 * their seams). Runs in the integration tests because they are the module that sees the whole
 * repository (Surefire's directory is {@code itests/}, the repository one above).
 */
public class SourceShapeTest {
    private static final Path REPO = Path.of("..").toAbsolutePath().normalize();

    @Test
    public void noMainSourceFileOver600Lines() throws IOException {
        List<Path> files = new ArrayList<>();
        List<Path> trees = mainTrees();
        for (Path tree : trees) {
            files.addAll(SourceShape.sources(tree));
        }
        assertTrue("the modules were found under " + REPO + ": " + trees.size() + " source trees, " + files.size()
                + " files", trees.size() > 20 && files.size() > 300);
        assertEquals("split these along their seams (one job per class)", List.of(), SourceShape.longerThan(REPO, files, 600));
    }

    /** Every {@code src/main/java} of a module (outside build output), at any depth. */
    private static List<Path> mainTrees() throws IOException {
        try (Stream<Path> s = Files.walk(REPO, 5)) {
            return s.filter(p -> p.endsWith(Path.of("src", "main", "java")) && Files.isDirectory(p))
                    .filter(p -> !inBuildOutput(REPO.relativize(p)))
                    .sorted().toList();
        }
    }

    /** Whether a directory named {@code target} is on the path (not a module such as {@code testkit-targets}). */
    private static boolean inBuildOutput(Path relative) {
        for (Path part : relative) {
            if (part.toString().equals("target")) {
                return true;
            }
        }
        return false;
    }
}
