package dev.strata.tools.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Which other process has a device file open (Linux: {@code /proc/PID/fd}), so that the tool does
 * not write under a running target.
 *
 * <p>Why: the tool claims nothing, and a running writeboost keeps its log, its superblock record
 * and its writeback in memory: a {@code writeback} or {@code repair} of its cache device under it
 * rewrote the record and wrote blocks back from the on-disk log, which can be older than what the
 * target has written to the backing device since (a stale block), and the target's next record
 * update then overwrote the tool's. Each fd is compared by file identity (device and inode, what
 * {@link Files#isSameFile} compares through the fd's link), so another path to the same file
 * counts too. Where there is no {@code /proc} (or a process's fds cannot be read) nothing is found:
 * the check can only refuse, never stop the tool from working.
 */
final class OpenFiles {
    private static final Path PROC = Path.of("/proc");

    private OpenFiles() {
    }

    /** Who else has {@code file} open, e.g. {@code Strata (pid 14625, strata.home=/opt/strata)}; empty if no one. */
    static Optional<String> holder(Path file) {
        if (!Files.isDirectory(PROC.resolve("self/fd"))) {
            return Optional.empty();
        }
        long self = ProcessHandle.current().pid();
        try (DirectoryStream<Path> pids = Files.newDirectoryStream(PROC, p -> p.getFileName().toString().matches("\\d+"))) {
            for (Path pid : pids) {
                if (Long.parseLong(pid.getFileName().toString()) == self) {
                    continue;
                }
                if (holds(pid, file)) {
                    return Optional.of(describe(pid));
                }
            }
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
        return Optional.empty();
    }

    private static boolean holds(Path pid, Path file) {
        try (DirectoryStream<Path> fds = Files.newDirectoryStream(pid.resolve("fd"))) {
            for (Path fd : fds) {
                try {
                    if (Files.isSameFile(fd, file)) {
                        return true;
                    }
                } catch (IOException | RuntimeException e) {
                    // closed meanwhile, a socket, or not ours to look at
                }
            }
        } catch (IOException | RuntimeException e) {
            // the process ended, or its fds are not ours to read
        }
        return false;
    }

    private static String describe(Path pid) {
        String n = pid.getFileName().toString();
        try {
            String[] argv = new String(Files.readAllBytes(pid.resolve("cmdline")), StandardCharsets.UTF_8).split("\0");
            for (String a : argv) {
                if (a.startsWith("-Dstrata.home=")) {
                    return "Strata (pid " + n + ", strata.home=" + a.substring("-Dstrata.home=".length()) + ")";
                }
            }
            if (argv.length > 0 && !argv[0].isEmpty()) {
                return "process " + n + " (" + Path.of(argv[0]).getFileName() + ")";
            }
        } catch (IOException | RuntimeException e) {
            // gone meanwhile: the pid says enough
        }
        return "process " + n;
    }
}
