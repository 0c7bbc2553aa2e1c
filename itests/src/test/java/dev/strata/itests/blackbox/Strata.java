package dev.strata.itests.blackbox;

import static org.junit.Assert.fail;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.Stream;

import dev.strata.itests.StrataOptions;

/**
 * A private copy of the assembled distribution ({@code distribution/target/strata}, {@code var/}
 * left empty) under {@code target/itest-work/NAME/strata}, driven only from outside: {@code
 * bin/strata} as a process, real NBD clients on 127.0.0.1. Every process it starts is stopped by
 * {@link Daemon#close()} (SIGTERM, bounded wait, then SIGKILL of the process and its descendants)
 * and, should the test JVM itself go down first, by a shutdown hook.
 */
final class Strata {

    /** Generous deadlines: the machine is shared and noisy; a pass never depends on timing. */
    static final long START_SECONDS = 180;
    static final long STOP_SECONDS = 120;

    private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> LIVE.forEach(Strata::kill), "blackbox-cleanup"));
    }

    final Path home;
    final Path work;
    private final AtomicInteger runs = new AtomicInteger();

    private Strata(Path home) {
        this.home = home;
        this.work = home.getParent();
    }

    /** Copies the assembled distribution to a fresh directory (var/ empty). */
    static Strata copy(String name) {
        Path source = StrataOptions.distribution();
        Path target = StrataOptions.workDir("blackbox-" + name).resolve("strata");
        try (Stream<Path> s = Files.walk(source)) {
            for (Path p : s.toList()) {
                Path rel = source.relativize(p);
                if (rel.startsWith("var") && rel.getNameCount() > 1) {
                    continue; // someone else's run state
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
        return new Strata(target);
    }

    Path var(String rel) {
        return home.resolve("var").resolve(rel);
    }

    /** A TCP port nobody listens on right now (the kernel's choice). */
    static int freePort() {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(false);
            s.bind(new InetSocketAddress("127.0.0.1", 0));
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The outcome of one bin/strata run to completion. */
    record Result(int exit, String out, String err) {
        @Override
        public String toString() {
            return "exit " + exit + "\n--- stdout:\n" + out + "--- stderr:\n" + err;
        }
    }

    /** Runs {@code bin/strata ARGS} to completion (bounded). */
    Result run(String... args) throws IOException, InterruptedException {
        int n = runs.incrementAndGet();
        Path out = work.resolve("run-" + n + ".out");
        Path err = work.resolve("run-" + n + ".err");
        Process p = start(args, out, err);
        try {
            if (!p.waitFor(START_SECONDS + STOP_SECONDS, TimeUnit.SECONDS)) {
                fail("bin/strata " + String.join(" ", args) + " did not finish in time\n" + read(out) + read(err) + logTail());
            }
            return new Result(p.exitValue(), read(out), read(err));
        } finally {
            kill(p);
        }
    }

    /**
     * Starts {@code bin/strata --daemon ARGS} and waits (bounded) for its ready line. The caller
     * closes the returned daemon (try-with-resources or an {@code @AfterClass}).
     */
    Daemon daemon(String... args) throws IOException {
        int n = runs.incrementAndGet();
        Path out = work.resolve("daemon-" + n + ".out");
        Path err = work.resolve("daemon-" + n + ".err");
        List<String> all = new ArrayList<>();
        all.add("--daemon");
        all.addAll(List.of(args));
        Daemon d = new Daemon(start(all.toArray(String[]::new), out, err), out, err);
        try {
            poll("bin/strata --daemon " + String.join(" ", args) + " prints 'strata: ready'", START_SECONDS,
                    () -> d.stdout().contains("strata: ready") || !d.process.isAlive(), d::diagnostics);
            if (!d.stdout().contains("strata: ready")) {
                fail("bin/strata --daemon exited with " + d.process.exitValue() + " before it was ready" + d.diagnostics());
            }
        } catch (RuntimeException | AssertionError e) {
            d.close();
            throw e;
        }
        return d;
    }

    private Process start(String[] args, Path out, Path err) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(home.resolve("bin/strata").toString());
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(work.toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile()).redirectInput(new File("/dev/null"));
        pb.environment().remove("STRATA_NO_DEFAULT_STACK");
        pb.environment().remove("STRATA_TIMEOUT");
        Process p = pb.start();
        LIVE.add(p);
        return p;
    }

    String logTail() {
        try {
            Path log = var("log/strata.log");
            if (!Files.exists(log)) {
                return "";
            }
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            return "\n--- var/log/strata.log (tail):\n" + String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
        } catch (IOException e) {
            return "\n(cannot read var/log/strata.log: " + e + ")";
        }
    }

    static String read(Path p) {
        try {
            return Files.exists(p) ? Files.readString(p, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** SIGKILL to the process and everything it started; waits (bounded) for it to go. */
    static void kill(Process p) {
        if (p.isAlive()) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            try {
                p.waitFor(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        LIVE.remove(p);
    }

    /** Re-checks {@code condition} every 50 ms until it holds; fails after {@code seconds}. */
    static void poll(String what, long seconds, BooleanSupplier condition, Supplier<String> diagnostics) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("not within " + seconds + " s: " + what + diagnostics.get());
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        }
    }

    /** Waits (bounded) until something accepts TCP connections on 127.0.0.1:port. */
    static void awaitPort(int port) {
        poll("something listens on 127.0.0.1:" + port, START_SECONDS, () -> {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
                return true;
            } catch (IOException e) {
                return false;
            }
        }, () -> "");
    }

    /** A running {@code bin/strata --daemon}. */
    final class Daemon implements AutoCloseable {
        final Process process;
        private final Path out;
        private final Path err;

        private Daemon(Process process, Path out, Path err) {
            this.process = process;
            this.out = out;
            this.err = err;
        }

        String stdout() {
            return read(out);
        }

        String diagnostics() {
            return "\n--- stdout:\n" + read(out) + "--- stderr:\n" + read(err) + logTail();
        }

        /**
         * Stops it as a user would (SIGTERM) and returns its exit code; fails if it does not stop
         * within the deadline (after killing it).
         */
        int stop() throws InterruptedException {
            process.destroy(); // SIGTERM (bin/strata execs the JVM, whose shutdown hook stops Felix)
            if (!process.waitFor(STOP_SECONDS, TimeUnit.SECONDS)) {
                kill(process);
                fail("bin/strata --daemon did not stop within " + STOP_SECONDS + " s of SIGTERM; killed" + diagnostics());
            }
            LIVE.remove(process);
            return process.exitValue();
        }

        /** Stops it if it still runs; never leaves a process behind. */
        @Override
        public void close() {
            try {
                if (process.isAlive()) {
                    process.destroy();
                    process.waitFor(STOP_SECONDS, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                kill(process);
            }
        }
    }
}
