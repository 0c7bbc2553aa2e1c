package dev.strata.itests.blackbox;

import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import dev.strata.itests.StrataOptions;

/**
 * A real Apache Karaf (the {@code org.apache.karaf:apache-karaf} tarball Maven fetched), unpacked
 * fresh under {@code target/itest-work/NAME}, on ephemeral SSH and RMI ports, reading bundles only
 * from its own {@code system/} and Strata's Maven-layout bundle repository (built by
 * {@code features/}), never from a network repository. Its Maven
 * local repository is private, so nothing it resolves lands in the shared {@code ~/.m2}.
 * Commands run through Karaf's own shell: {@code bin/client -b} over SSH, commands on stdin.
 */
final class Karaf implements AutoCloseable {
    static final long START_SECONDS = 180;
    private static final Pattern ANSI = Pattern.compile("\u001B\\[[0-9;]*[A-Za-z]");

    final Path work;
    final Path home;
    final int sshPort;
    private final Process process;

    private Karaf(Path work, Path home, int sshPort, Process process) {
        this.work = work;
        this.home = home;
        this.sshPort = sshPort;
        this.process = process;
    }

    /**
     * The JDK Karaf runs on: this test's own, unless it is newer than Karaf 4.4 supports. Karaf
     * 4.4.10 (the newest release on Maven Central here) does not start on JDK 24 or later: its
     * {@code bin/inc} passes {@code -Djava.security.manager=allow}, which those JDKs refuse, and
     * without it its EventAdmin fails on {@code Subject.getSubject}. There the test runs Karaf on a
     * JDK 17 or 21 ({@code -Dstrata.karaf.java.home}, or the first found under /usr/lib/jvm): the
     * Strata bundles it installs are the same (built for release 17), and the suite's Felix and
     * Equinox tests run them on the newer JDK itself (docs/embedding.md).
     */
    static final String JAVA_HOME = karafJavaHome();

    private static String karafJavaHome() {
        String given = System.getProperty("strata.karaf.java.home", "");
        if (!given.isBlank()) {
            return given;
        }
        if (Runtime.version().feature() < 24) {
            return System.getProperty("java.home");
        }
        File[] jdks = new File("/usr/lib/jvm").listFiles();
        if (jdks != null) {
            java.util.Arrays.sort(jdks);
            for (File jdk : jdks) {
                try {
                    String release = Files.readString(jdk.toPath().resolve("release"));
                    if (Pattern.compile("(?m)^JAVA_VERSION=\"(17|21)[.\"]").matcher(release).find()
                            && new File(jdk, "bin/java").canExecute()) {
                        return jdk.getPath();
                    }
                } catch (IOException notAJdk) {
                    // a link or a folder without a release file: not a JDK to run Karaf on
                }
            }
        }
        throw new IllegalStateException("Karaf 4.4 does not run on JDK " + Runtime.version().feature()
                + " and no JDK 17 or 21 was found under /usr/lib/jvm; give one with -Dstrata.karaf.java.home=DIR");
    }

    static Karaf start(String name) throws Exception {
        Path work = StrataOptions.workDir(name);
        Path tar = Path.of(property("strata.karaf.tar"));
        run(work, List.of("tar", "xzf", tar.toString(), "--strip-components=1", "-C", work.resolve("karaf").toString()), true);
        Path home = work.resolve("karaf");
        int ssh = Strata.freePort();
        int rmiRegistry = Strata.freePort();
        int rmiServer = Strata.freePort();
        Files.writeString(home.resolve("etc/users.properties"),
                "karaf = karaf,_g_:admingroup\n_g_\\:admingroup = group,admin,manager,viewer,systembundles,ssh\n",
                StandardCharsets.UTF_8);
        edit(home.resolve("etc/org.apache.karaf.shell.cfg"), "sshPort = 8101", "sshPort = " + ssh);
        edit(home.resolve("etc/org.apache.karaf.shell.cfg"), "sshHost = 0.0.0.0", "sshHost = 127.0.0.1");
        edit(home.resolve("etc/org.apache.karaf.management.cfg"), "rmiRegistryPort = 1099", "rmiRegistryPort = " + rmiRegistry);
        edit(home.resolve("etc/org.apache.karaf.management.cfg"), "rmiServerPort = 44444", "rmiServerPort = " + rmiServer);
        // the direct (O_DIRECT) driver imports com.sun.nio.file, which Karaf's system bundle does not export by default
        edit(home.resolve("etc/config.properties"), "    sun.misc, \\\n", "    sun.misc, \\\n    com.sun.nio.file, \\\n");
        Path mvn = home.resolve("etc/org.ops4j.pax.url.mvn.cfg");
        String cfg = Files.readString(mvn);
        cfg = Pattern.compile("^org\\.ops4j\\.pax\\.url\\.mvn\\.repositories=.*?(?=\\n[^\\s])", Pattern.MULTILINE | Pattern.DOTALL)
                .matcher(cfg).replaceFirst("org.ops4j.pax.url.mvn.repositories=" + Path.of(property("strata.features.repo")).toUri()
                        + "@id=strata@snapshots");
        cfg += "\norg.ops4j.pax.url.mvn.localRepository=" + work.resolve("m2") + "\n";
        Files.writeString(mvn, cfg);
        assertTrue("repositories not replaced in " + mvn, cfg.contains("@id=strata@snapshots"));

        ProcessBuilder pb = new ProcessBuilder(home.resolve("bin/karaf").toString(), "server").directory(home.toFile())
                .redirectErrorStream(true).redirectOutput(work.resolve("karaf.out").toFile())
                .redirectInput(new File("/dev/null"));
        pb.environment().put("JAVA_HOME", JAVA_HOME);
        Karaf k = new Karaf(work, home, ssh, pb.start());
        Runtime.getRuntime().addShutdownHook(new Thread(() -> Strata.kill(k.process), "karaf-cleanup"));
        return k;
    }

    /** Runs {@code commands} in one Karaf shell session; fails on the first that fails. */
    String shell(String... commands) throws Exception {
        Path script = Files.createTempFile(work, "shell-", ".txt");
        Files.writeString(script, String.join("\n", commands) + "\n");
        List<String> cmd = List.of(home.resolve("bin/client").toString(), "-h", "127.0.0.1", "-a", String.valueOf(sshPort),
                "-u", "karaf", "-p", "karaf", "-r", String.valueOf(START_SECONDS / 2), "-d", "2", "-b");
        Path out = Files.createTempFile(work, "shell-", ".out");
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(home.toFile()).redirectErrorStream(true)
                .redirectOutput(out.toFile()).redirectInput(script.toFile());
        pb.environment().put("JAVA_HOME", JAVA_HOME);
        Process p = pb.start();
        try {
            if (!p.waitFor(START_SECONDS + 120, TimeUnit.SECONDS)) {
                fail("Karaf shell not finished in time: " + String.join("; ", commands) + "\n" + Files.readString(out) + log());
            }
        } finally {
            Strata.kill(p);
        }
        String text = ANSI.matcher(Files.readString(out)).replaceAll("");
        if (text.contains("Error executing command") || p.exitValue() != 0) {
            fail("Karaf shell failed (exit " + p.exitValue() + "): " + String.join("; ", commands) + "\n" + text + log());
        }
        return text;
    }

    /**
     * One command whose result is wanted: Karaf's batch mode does not print a command's return
     * value, so it goes through a pipe ({@code grep} prints what it reads).
     */
    String print(String command) throws Exception {
        return shell(command + " | grep -v '^$'");
    }

    String log() {
        try {
            Path log = home.resolve("data/log/karaf.log");
            List<String> lines = Files.exists(log) ? Files.readAllLines(log) : List.of();
            return "\n--- last lines of karaf.log:\n" + String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
        } catch (IOException e) {
            return "\n(karaf.log unreadable: " + e.getMessage() + ")";
        }
    }

    /** bin/stop, then a bounded wait; the process tree is killed if it does not go. */
    @Override
    public void close() throws Exception {
        try {
            List<String> stop = new ArrayList<>(List.of(home.resolve("bin/stop").toString()));
            ProcessBuilder pb = new ProcessBuilder(stop).directory(home.toFile()).redirectErrorStream(true)
                    .redirectOutput(work.resolve("stop.out").toFile());
            pb.environment().put("JAVA_HOME", JAVA_HOME);
            Process p = pb.start();
            p.waitFor(60, TimeUnit.SECONDS);
            Strata.kill(p);
            process.waitFor(Strata.STOP_SECONDS, TimeUnit.SECONDS);
        } finally {
            Strata.kill(process);
        }
    }

    private static void edit(Path file, String from, String to) throws IOException {
        String s = Files.readString(file);
        if (!s.contains(from)) {
            fail(file + " has no '" + from.strip() + "' (another Karaf version?)");
        }
        Files.writeString(file, s.replace(from, to));
    }

    private static String property(String name) {
        String v = System.getProperty(name);
        if (v == null) {
            throw new IllegalStateException("system property " + name + " is not set (run through Maven)");
        }
        return v;
    }

    private static void run(Path dir, List<String> cmd, boolean mkdir) throws Exception {
        if (mkdir) {
            Files.createDirectories(dir.resolve("karaf"));
        }
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(dir.resolve("tar.out").toFile()).start();
        if (!p.waitFor(300, TimeUnit.SECONDS) || p.exitValue() != 0) {
            Strata.kill(p);
            fail(String.join(" ", cmd) + " failed:\n" + Files.readString(dir.resolve("tar.out")));
        }
    }
}
