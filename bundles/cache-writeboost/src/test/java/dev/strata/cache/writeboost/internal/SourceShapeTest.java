package dev.strata.cache.writeboost.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The shape issue 10 asked of this bundle's sources, kept from creeping back: no file in
 * {@code src/main} over 600 lines (DESIGN.md §14: the facade once grew to 2,543 and later crept to
 * 605 again), and no cycle between its packages (once {@code daemon} and {@code io} used each
 * other). Reads the sources from the module directory, where Surefire runs.
 */
class SourceShapeTest {
    private static final Path MAIN = Path.of("src/main/java");
    private static final int MAX_LINES = 600;
    private static final Pattern PACKAGE = Pattern.compile("^package ([\\w.]+);", Pattern.MULTILINE);
    private static final Pattern REFERENCE = Pattern.compile("\\b(dev\\.strata\\.cache\\.writeboost(?:\\.[a-z]\\w*)*)\\.[A-Z]");

    @Test
    void noSourceFileOver600Lines() throws IOException {
        List<String> tooLong = new ArrayList<>();
        for (Path p : sources()) {
            long lines = Files.readAllLines(p).size();
            if (lines > MAX_LINES) {
                tooLong.add(MAIN.relativize(p) + ": " + lines + " lines");
            }
        }
        assertTrue(sources().size() > 20, "the sources were found under " + MAIN.toAbsolutePath());
        assertEquals(List.of(), tooLong, "split these along their seams (one job per class)");
    }

    @Test
    void packagesFormNoCycle() throws IOException {
        Map<String, Set<String>> uses = new HashMap<>();
        for (Path p : sources()) {
            String src = Files.readString(p);
            Matcher pm = PACKAGE.matcher(src);
            assertTrue(pm.find(), p + " declares its package");
            String from = pm.group(1);
            Set<String> to = uses.computeIfAbsent(from, k -> new TreeSet<>());
            Matcher rm = REFERENCE.matcher(src.substring(pm.end()));
            while (rm.find()) {
                if (!rm.group(1).equals(from)) {
                    to.add(rm.group(1));
                }
            }
        }
        assertTrue(uses.size() >= 4, "the bundle's packages were read: " + uses.keySet());
        for (String start : uses.keySet()) {
            List<String> cycle = cycleFrom(start, start, uses, new ArrayList<>(List.of(start)), new HashSet<>());
            assertEquals(List.of(), cycle, "a package cycle");
        }
    }

    /** A path from {@code at} back to {@code start} through {@code uses}, or an empty list. */
    private static List<String> cycleFrom(String start, String at, Map<String, Set<String>> uses, List<String> path,
            Set<String> seen) {
        for (String next : uses.getOrDefault(at, Set.of())) {
            if (next.equals(start)) {
                List<String> cycle = new ArrayList<>(path);
                cycle.add(start);
                return cycle;
            }
            if (seen.add(next)) {
                path.add(next);
                List<String> found = cycleFrom(start, next, uses, path, seen);
                if (!found.isEmpty()) {
                    return found;
                }
                path.remove(path.size() - 1);
            }
        }
        return List.of();
    }

    private static List<Path> sources() throws IOException {
        try (Stream<Path> s = Files.walk(MAIN)) {
            return s.filter(p -> p.toString().endsWith(".java")).sorted().toList();
        }
    }
}
