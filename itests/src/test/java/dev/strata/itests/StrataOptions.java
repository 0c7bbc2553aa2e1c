package dev.strata.itests;

import static org.ops4j.pax.exam.CoreOptions.bundle;
import static org.ops4j.pax.exam.CoreOptions.cleanCaches;
import static org.ops4j.pax.exam.CoreOptions.frameworkProperty;
import static org.ops4j.pax.exam.CoreOptions.frameworkStartLevel;
import static org.ops4j.pax.exam.CoreOptions.junitBundles;
import static org.ops4j.pax.exam.CoreOptions.systemTimeout;
import static org.ops4j.pax.exam.CoreOptions.workingDirectory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.jar.JarFile;
import java.util.stream.Stream;

import org.ops4j.pax.exam.Option;

import dev.strata.launcher.LauncherConfig;

/**
 * Pax Exam options that reproduce the assembled distribution inside the test framework: every
 * bundle of {@code distribution/target/strata/bundle/} (the reactor's own build output) at the
 * start level {@code conf/config.properties} gives it, except logback, which tests replace with
 * slf4j-simple behind the same SPI Fly mediator (DESIGN.md §13).
 */
public final class StrataOptions {

    private StrataOptions() {
    }

    /** The assembled distribution directory (set by the build; see itests/pom.xml). */
    public static Path distribution() {
        String d = System.getProperty("strata.distribution");
        if (d == null) {
            throw new IllegalStateException("system property strata.distribution is not set (run through Maven)");
        }
        Path p = Path.of(d);
        if (!Files.isDirectory(p.resolve("bundle"))) {
            throw new IllegalStateException(p + "/bundle does not exist: build the distribution module first");
        }
        return p;
    }

    /** A fresh scratch directory for one test class under target/itest-work. */
    public static Path workDir(String name) {
        Path base = Path.of(System.getProperty("strata.itests.work", "target/itest-work"));
        try {
            Path dir = base.resolve(name);
            if (Files.exists(dir)) {
                deleteTree(dir);
            }
            return Files.createDirectories(dir).toAbsolutePath();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The distribution's bundle jars (logback excluded: tests log through slf4j-simple). */
    public static List<Path> distributionBundles() {
        try (Stream<Path> s = Files.list(distribution().resolve("bundle"))) {
            return s.filter(p -> p.getFileName().toString().endsWith(".jar"))
                    .filter(p -> !p.getFileName().toString().startsWith("logback-"))
                    .sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static String symbolicName(Path jar) {
        try (JarFile jf = new JarFile(jar.toFile())) {
            String bsn = jf.getManifest().getMainAttributes().getValue("Bundle-SymbolicName");
            int semi = bsn.indexOf(';');
            return (semi < 0 ? bsn : bsn.substring(0, semi)).trim();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The jar of a distribution bundle by symbolic name. */
    public static Path bundleJar(String symbolicName) {
        return distributionBundles().stream().filter(p -> symbolicName(p).equals(symbolicName)).findFirst()
                .orElseThrow(() -> new IllegalStateException("no bundle " + symbolicName + " in " + distribution().resolve("bundle")));
    }

    public static LauncherConfig distributionConfig() {
        Path home = distribution();
        try {
            return LauncherConfig.load(home.resolve("conf/config.properties"), Map.of("strata.home", home.toString()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The distribution as Pax Exam options, with Configuration Admin and FileInstall state under
     * {@code work} (so each test class starts from nothing).
     */
    public static Option[] distribution(Path work) {
        LauncherConfig config = distributionConfig();
        List<Option> options = new ArrayList<>();
        List<String> never = config.list("strata.start.never");
        for (Path jar : distributionBundles()) {
            String bsn = symbolicName(jar);
            // as the launcher does: libraries (gogo.jline, whose activator would open a console) are not started
            options.add(bundle(jar.toUri().toString()).startLevel(config.startLevel(bsn)).start(!never.contains(bsn)));
        }
        String simple = System.getProperty("strata.slf4j.simple");
        if (simple == null) {
            throw new IllegalStateException("system property strata.slf4j.simple is not set (run through Maven)");
        }
        options.add(bundle(Path.of(simple).toUri().toString()).startLevel(config.startLevel("slf4j.api")).start());
        Path deploy = work.resolve("deploy");
        try {
            Files.createDirectories(deploy);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        // for tests inside the framework, which cannot read conf/config.properties themselves
        options.add(frameworkProperty("strata.start.never").value(String.join(",", never)));
        options.add(frameworkProperty("felix.cm.dir").value(work.resolve("config").toString()));
        options.add(frameworkProperty("felix.fileinstall.dir").value(deploy.toString()));
        options.add(frameworkProperty("felix.fileinstall.poll").value("200"));
        options.add(frameworkProperty("felix.fileinstall.noInitialDelay").value("true"));
        options.add(frameworkProperty("felix.fileinstall.start.level").value(config.get("felix.fileinstall.start.level", "3")));
        options.add(frameworkProperty("felix.fileinstall.tmpdir").value(work.resolve("tmp").toString()));
        options.add(frameworkProperty("felix.fileinstall.log.level").value("1"));
        // as the distribution: FileInstall's in-place write-back off (the device manager writes the
        // files, atomically), hidden files (its temporary ones) not FileInstall's
        options.add(frameworkProperty("felix.fileinstall.enableConfigSave").value(config.get("felix.fileinstall.enableConfigSave", "true")));
        String filter = config.get("felix.fileinstall.filter", "");
        if (!filter.isBlank()) {
            options.add(frameworkProperty("felix.fileinstall.filter").value(filter));
        }
        // the test JVM's class path holds slf4j (Pax Exam's own logging); Felix's implicit boot
        // delegation would let ServiceLoader calls inside the framework find those classes
        options.add(frameworkProperty("felix.bootdelegation.implicit").value("false"));
        options.add(frameworkProperty("gosh.args").value("--nointeractive --noshutdown"));
        options.add(frameworkProperty("org.slf4j.simpleLogger.defaultLogLevel").value("warn"));
        options.add(frameworkStartLevel(Integer.parseInt(config.get("org.osgi.framework.startlevel.beginning", "5")) + 1));
        options.add(workingDirectory(work.resolve("exam").toString()));
        options.add(cleanCaches());
        options.add(systemTimeout(120_000));
        options.add(junitBundles());
        return options.toArray(new Option[0]);
    }

    static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted((a, b) -> b.getNameCount() - a.getNameCount()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
