package dev.strata.shell.internal;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;

/**
 * {@code log:tail [N]}: the last lines of the distribution's log. Logback writes it
 * ({@code conf/logback.xml}: {@code var/log/strata.log} under {@code strata.home}); the
 * framework property {@code strata.log.file} names another file.
 */
@Component(service = LogCommands.class, property = {"osgi.command.scope=log", "osgi.command.function=tail"})
public final class LogCommands {

    static final int DEFAULT_LINES = 20;
    private Path file;

    @Activate
    void activate(BundleContext context) {
        file = logFile(context.getProperty("strata.log.file"), context.getProperty("strata.home"));
    }

    static Path logFile(String configured, String home) {
        if (configured != null && !configured.isBlank()) {
            return Path.of(configured.trim());
        }
        return Path.of(home == null || home.isBlank() ? "." : home.trim(), "var", "log", "strata.log");
    }

    @Descriptor("show the last lines of the log (var/log/strata.log)")
    public String tail(@Descriptor("show the platform log (var/log/platform.log: FileInstall, JLine) instead")
            @Parameter(names = "--platform", presentValue = "true", absentValue = "false") boolean platform) throws IOException {
        return tail(platform, DEFAULT_LINES);
    }

    @Descriptor("show the last N lines of the log (var/log/strata.log)")
    public String tail(@Descriptor("show the platform log (var/log/platform.log: FileInstall, JLine) instead")
            @Parameter(names = "--platform", presentValue = "true", absentValue = "false") boolean platform,
            @Descriptor("number of lines (default " + DEFAULT_LINES + ")") int lines) throws IOException {
        if (lines < 1) {
            throw new IllegalArgumentException("log:tail: the number of lines must be 1 or more, not " + lines);
        }
        Path f = platform ? file.resolveSibling("platform.log") : file;
        if (!Files.isRegularFile(f)) {
            throw new IllegalArgumentException("no log at " + f + " yet (conf/logback.xml says where Strata logs)");
        }
        List<String> out = lastLines(f, lines);
        return out.isEmpty() ? "(" + f + " is empty)" : String.join("\n", out);
    }

    /** The last {@code n} lines of a file, read backwards in blocks (a log may be large). */
    static List<String> lastLines(Path f, int n) throws IOException {
        try (RandomAccessFile raf = new RandomAccessFile(f.toFile(), "r")) {
            long end = raf.length();
            long pos = end;
            int newlines = 0;
            byte[] block = new byte[8192];
            // skip one trailing newline so "last N lines" does not count an empty last line
            if (end > 0) {
                raf.seek(end - 1);
                if (raf.read() == '\n') {
                    end--;
                    pos = end;
                }
            }
            long start = 0;
            search:
            while (pos > 0) {
                int len = (int) Math.min(block.length, pos);
                pos -= len;
                raf.seek(pos);
                raf.readFully(block, 0, len);
                for (int i = len - 1; i >= 0; i--) {
                    if (block[i] == '\n' && ++newlines == n) {
                        start = pos + i + 1;
                        break search;
                    }
                }
            }
            byte[] tail = new byte[(int) (end - start)];
            raf.seek(start);
            raf.readFully(tail);
            Deque<String> lines = new ArrayDeque<>(new String(tail, StandardCharsets.UTF_8).lines().toList());
            while (lines.size() > n) {
                lines.removeFirst();
            }
            return new ArrayList<>(lines);
        }
    }
}
