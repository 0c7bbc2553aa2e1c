package dev.strata.testsupport.source;

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

/**
 * The shape DESIGN.md §14 asks of the sources, read from a source tree for tests that keep it:
 * files over a line limit, and cycles between the packages of one tree (a package that uses
 * another which, directly or through others, uses it back). A use is any mention of another
 * package's class by its full name, in an import or in the code, or a wildcard import of the
 * package; classes of the same package need no import and are not uses.
 */
public final class SourceShape {
    private static final Pattern PACKAGE = Pattern.compile("^package ([\\w.]+);", Pattern.MULTILINE);

    private SourceShape() {
    }

    /** The {@code .java} files under {@code root}, sorted (none if it does not exist). */
    public static List<Path> sources(Path root) throws IOException {
        if (!Files.isDirectory(root)) {
            return List.of();
        }
        try (Stream<Path> s = Files.walk(root)) {
            return s.filter(p -> p.toString().endsWith(".java")).sorted().toList();
        }
    }

    /** "path: N lines" for each of {@code files} longer than {@code maxLines}, paths relative to {@code base}. */
    public static List<String> longerThan(Path base, List<Path> files, int maxLines) throws IOException {
        List<String> tooLong = new ArrayList<>();
        for (Path p : files) {
            long lines = Files.readAllLines(p).size();
            if (lines > maxLines) {
                tooLong.add(base.relativize(p) + ": " + lines + " lines");
            }
        }
        return tooLong;
    }

    /**
     * A cycle among the packages under {@code prefix} that {@code files} declare, as the list of
     * packages from one back to itself; empty when there is none.
     */
    public static List<String> packageCycle(List<Path> files, String prefix) throws IOException {
        // a class by its full name, or a whole package imported with a wildcard
        Pattern reference = Pattern.compile("\\b(" + Pattern.quote(prefix) + "(?:\\.[a-z]\\w*)*)\\.(?:[A-Z]|\\*)");
        Map<String, Set<String>> uses = new HashMap<>();
        for (Path p : files) {
            String src = Files.readString(p);
            Matcher pm = PACKAGE.matcher(src);
            if (!pm.find()) {
                throw new IllegalArgumentException(p + " declares no package");
            }
            String from = pm.group(1);
            Set<String> to = uses.computeIfAbsent(from, k -> new TreeSet<>());
            Matcher rm = reference.matcher(src.substring(pm.end()));
            while (rm.find()) {
                if (!rm.group(1).equals(from)) {
                    to.add(rm.group(1));
                }
            }
        }
        for (String start : new TreeSet<>(uses.keySet())) {
            List<String> cycle = cycleFrom(start, start, uses, new ArrayList<>(List.of(start)), new HashSet<>());
            if (!cycle.isEmpty()) {
                return cycle;
            }
        }
        return List.of();
    }

    /** A path from {@code at} back to {@code start}, or an empty list. */
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
}
