package dev.strata.launcher;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Points every configuration FileInstall made from a {@code deploy/*.cfg} file at this
 * distribution's own {@code deploy/} directory before Configuration Admin reads them.
 *
 * <p>Why: Configuration Admin stores, with each such configuration, the absolute name of the file
 * it came from ({@code felix.fileinstall.filename}), and FileInstall writes every later change of
 * the configuration ({@code cache:set}, {@code dev:reload}, {@code cache:attach}) back into that
 * file. In a copy of a distribution that had run ({@code cp -r strata strata2}, which the
 * "another Strata is running" line suggests), those names still point at the original's
 * {@code deploy/}: a {@code cache:set} in the copy rewrote the original's device file, and the
 * original, watching it, reloaded its own device to the copy's definition. A moved distribution
 * had the same names pointing at a directory that no longer exists. Each file name is kept, only
 * its directory changes; configurations naming a file already in this {@code deploy/} are untouched.
 */
final class DeployOwnership {

    static final String KEY = "felix.fileinstall.filename";
    private static final Pattern LINE = Pattern.compile("^" + Pattern.quote(KEY) + "=\"([^\"\\\\]*)\"\\s*$");
    /** Characters Configuration Admin's file format writes unescaped: a rewrite is then exact. */
    private static final Pattern PLAIN = Pattern.compile("[A-Za-z0-9/._~%:+@!$&'*;-]*");

    private DeployOwnership() {
    }

    /**
     * Rewrites, under {@code cmDir}, each {@code felix.fileinstall.filename} that names a file
     * outside {@code deployDir}, to the file of the same name in {@code deployDir}.
     *
     * @return the directories the rewritten names pointed at before (empty: nothing changed)
     */
    static List<Path> adopt(Path cmDir, Path deployDir) throws IOException {
        List<Path> foreign = new ArrayList<>();
        if (!Files.isDirectory(cmDir)) {
            return foreign;
        }
        Path ours = deployDir.toAbsolutePath().normalize();
        List<Path> files;
        try (Stream<Path> s = Files.walk(cmDir)) {
            files = s.filter(p -> p.getFileName().toString().endsWith(".config") && Files.isRegularFile(p)).toList();
        }
        for (Path f : files) {
            List<String> lines = Files.readAllLines(f);
            boolean changed = false;
            for (int i = 0; i < lines.size(); i++) {
                Matcher m = LINE.matcher(lines.get(i));
                if (!m.matches()) {
                    continue;
                }
                Path named = pathOf(m.group(1));
                if (named == null || named.getParent() == null || named.getParent().equals(ours)) {
                    continue;
                }
                String now = ours.resolve(named.getFileName().toString()).toFile().toURI().toString();
                if (!PLAIN.matcher(now).matches()) {
                    continue;
                }
                lines.set(i, KEY + "=\"" + now + "\"");
                changed = true;
                if (!foreign.contains(named.getParent())) {
                    foreign.add(named.getParent());
                }
            }
            if (changed) {
                Path tmp = f.resolveSibling(f.getFileName() + ".tmp");
                Files.write(tmp, lines);
                Files.move(tmp, f, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            }
        }
        return foreign;
    }

    private static Path pathOf(String value) {
        if (!PLAIN.matcher(value).matches() || !value.startsWith("file:")) {
            return null;
        }
        try {
            return Path.of(new URI(value)).toAbsolutePath().normalize();
        } catch (RuntimeException | java.net.URISyntaxException e) {
            return null;
        }
    }
}
