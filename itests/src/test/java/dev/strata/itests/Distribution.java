package dev.strata.itests;

import static org.junit.Assert.fail;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A private copy of the assembled distribution (so each test starts with an empty {@code var/}),
 * driven as a user would: {@code bin/strata} as a process.
 */
final class Distribution {

    /** Generous: the machine is shared; a start takes seconds, not minutes. */
    static final long RUN_TIMEOUT_SECONDS = 180;

    final Path home;
    /** Extra environment of bin/strata (e.g. JAVA_OPTS). */
    final java.util.Map<String, String> env = new java.util.HashMap<>();

    private Distribution(Path home) {
        this.home = home;
    }

    /** Copies distribution/target/strata to target/itest-work/NAME/strata, var/ emptied. */
    static Distribution copy(String name) {
        Path source = StrataOptions.distribution();
        Path target = StrataOptions.workDir(name).resolve("strata");
        try (Stream<Path> s = Files.walk(source)) {
            for (Path p : s.toList()) {
                Path rel = source.relativize(p);
                if (rel.startsWith("var") && rel.getNameCount() > 1) {
                    continue; // state of someone else's run
                }
                Path t = target.resolve(rel.toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(t);
                } else {
                    Files.copy(p, t, StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new Distribution(target);
    }

    /** Copies this distribution, var/ included (as {@code cp -r} would), to target/itest-work/NAME/strata. */
    Distribution copyWithState(String name) {
        Path target = StrataOptions.workDir(name).resolve("strata");
        try (Stream<Path> s = Files.walk(home)) {
            for (Path p : s.toList()) {
                Path t = target.resolve(home.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(t);
                } else {
                    Files.copy(p, t, StandardCopyOption.COPY_ATTRIBUTES, StandardCopyOption.REPLACE_EXISTING);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new Distribution(target);
    }

    /**
     * Moves the default stack's export (127.0.0.1:10809) to {@code port}: 10809 may be anyone's
     * on a shared machine.
     */
    Distribution defaultExportPort(int port) {
        Path cfg = home.resolve("deploy/dev.strata.nbd.export-wb0.cfg");
        try {
            Files.writeString(cfg, Files.readString(cfg).replace("port=10809", "port=" + port));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    /** A free TCP port on 127.0.0.1 right now. */
    static int freePort() {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    Path var(String rel) {
        return home.resolve("var").resolve(rel);
    }

    /** The result of one {@code bin/strata} run. */
    record Result(int exit, String out, String err) {
        List<String> errLines() {
            return err.lines().filter(l -> !l.isBlank()).toList();
        }

        @Override
        public String toString() {
            return "exit " + exit + "\n--- stdout:\n" + out + "--- stderr:\n" + err;
        }
    }

    /** Runs bin/strata with arguments from another working directory, waits (bounded) for it. */
    Result run(String... args) {
        return runWithInput(null, args);
    }

    /** As {@link #run}, with {@code input} (if not null) on its standard input, as from a pipe. */
    Result runWithInput(String input, String... args) {
        Path log = home.getParent();
        Path out = log.resolve("stdout.txt");
        Path err = log.resolve("stderr.txt");
        java.io.File stdin = new java.io.File("/dev/null");
        if (input != null) {
            try {
                stdin = Files.writeString(log.resolve("stdin.txt"), input, StandardCharsets.UTF_8).toFile();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        Process p = start(args, ProcessBuilder.Redirect.to(out.toFile()), ProcessBuilder.Redirect.to(err.toFile()), stdin);
        try {
            if (!p.waitFor(RUN_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                p.waitFor(30, TimeUnit.SECONDS);
                fail("bin/strata " + String.join(" ", args) + " did not finish within " + RUN_TIMEOUT_SECONDS + " s\n"
                        + Files.readString(out) + Files.readString(err));
            }
            return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    Process start(String[] args, ProcessBuilder.Redirect out, ProcessBuilder.Redirect err) {
        return start(args, out, err, new java.io.File("/dev/null"));
    }

    Process start(String[] args, ProcessBuilder.Redirect out, ProcessBuilder.Redirect err, java.io.File stdin) {
        List<String> cmd = new ArrayList<>();
        cmd.add(home.resolve("bin/strata").toString());
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(home.getParent().toFile()).redirectOutput(out).redirectError(err)
                .redirectInput(ProcessBuilder.Redirect.from(stdin));
        pb.environment().remove("STRATA_NO_DEFAULT_STACK");
        pb.environment().remove("STRATA_TIMEOUT");
        pb.environment().putAll(env);
        try {
            return pb.start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A running daemon whose stdout is read line by line. */
    static final class Daemon implements AutoCloseable {
        final Process process;
        private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        private final StringBuilder seen = new StringBuilder();

        Daemon(Distribution d, Path stderr, String... args) {
            this.process = d.start(args, ProcessBuilder.Redirect.PIPE, ProcessBuilder.Redirect.to(stderr.toFile()));
            Thread reader = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String line; (line = r.readLine()) != null;) {
                        lines.add(line);
                    }
                } catch (IOException ignored) {
                    // process gone
                }
            }, "daemon-stdout");
            reader.setDaemon(true);
            reader.start();
        }

        /** Waits (bounded) for a stdout line containing {@code text}; returns everything seen so far. */
        String awaitLine(String text, long seconds) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            while (true) {
                long left = deadline - System.nanoTime();
                String line = left > 0 ? lines.poll(left, TimeUnit.NANOSECONDS) : null;
                if (line == null) {
                    fail("no line containing '" + text + "' within " + seconds + " s; stdout so far:\n" + seen);
                }
                seen.append(line).append('\n');
                if (line.contains(text)) {
                    return seen.toString();
                }
            }
        }

        @Override
        public void close() throws InterruptedException {
            if (process.isAlive()) {
                process.destroyForcibly();
                process.waitFor(30, TimeUnit.SECONDS);
            }
        }
    }
}
