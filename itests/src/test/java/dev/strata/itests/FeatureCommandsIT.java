package dev.strata.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.ops4j.pax.exam.CoreOptions.frameworkProperty;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import javax.inject.Inject;

import org.apache.felix.service.command.CommandProcessor;
import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Converter;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.OptionUtils;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;

import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;

import dev.strata.api.DeviceManager;

/**
 * feature:list|install|uninstall on the distribution's bundle set, with the distribution's own
 * features/ and repository/ directories: a feature nobody uses goes down (its target type with
 * it) and comes back live; a feature in use is refused, naming the device.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class FeatureCommandsIT {

    @Inject
    CommandProcessor processor;

    @Inject
    DeviceManager manager;

    @Inject
    BundleContext context;

    private CommandSession session;

    @Configuration
    public Option[] config() {
        Path work = StrataOptions.workDir("feature-commands");
        // a repository of its own (not the distribution's), for the test that installs from it
        Path repository = work.resolve("repository");
        try {
            Files.createDirectories(repository);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return OptionUtils.combine(StrataOptions.distribution(work),
                frameworkProperty("strata.features.dir").value(StrataOptions.distribution().resolve("features").toString()),
                frameworkProperty("strata.repository.dir").value(repository.toString()));
    }

    @Before
    public void open() {
        session = processor.createSession(new ByteArrayInputStream(new byte[0]), new ByteArrayOutputStream(), new ByteArrayOutputStream());
    }

    @After
    public void close() {
        session.close();
    }

    private String run(String command) throws Exception {
        Object result = session.execute(command);
        return result == null ? "" : session.format(result, Converter.INSPECT).toString();
    }

    private boolean hasType(String type) {
        return manager.targetTypes().stream().anyMatch(t -> t.type().equals(type));
    }

    private static String line(String list, String feature) {
        return list.lines().filter(l -> l.startsWith(feature + " ")).findFirst().orElse("(no line for " + feature + ")");
    }

    @Test
    public void uninstallInstallAndRefuseWhileInUse() throws Exception {
        Await.until("the memory target type", 60, () -> hasType("memory"));
        String list = run("feature:list");
        for (String f : new String[] {"strata-core", "strata-drivers", "strata-shell", "strata-testkit", "strata-writeboost"}) {
            assertTrue(list, line(list, f).contains(" installed"));
        }

        assertEquals("uninstalled strata-drivers", run("feature:uninstall strata-drivers").trim());
        Await.until("the memory target type to go", 60, () -> !hasType("memory"));
        assertTrue(line(run("feature:list"), "strata-drivers").contains("not installed"));
        assertTrue(hasType("delay")); // the other features stay up

        assertEquals("installed strata-drivers", run("feature:install strata-drivers").trim());
        Await.until("the memory target type back", 60, () -> hasType("memory"));
        manager.create("fmem0", "memory", Map.of("size", "1M"));
        assertTrue(line(run("feature:list"), "strata-drivers").contains(" installed"));

        String refused = run("feature:uninstall strata-drivers");
        assertEquals(1, refused.trim().lines().count());
        assertTrue(refused, refused.contains("in use by devices fmem0 (memory)"));
        assertTrue("a refused uninstall changes nothing", hasType("memory"));

        manager.remove("fmem0");

        // a bundle two features name (the cache: commands) stays up for the one still installed
        assertEquals("uninstalled strata-writecache", run("feature:uninstall strata-writecache").trim());
        Await.until("the writecache target type to go", 60, () -> !hasType("writecache"));
        String after = run("feature:list");
        assertTrue(after, line(after, "strata-writecache").contains("not installed"));
        assertTrue(after, line(after, "strata-writeboost").contains(" installed"));
        assertTrue(run("cache:controllers"), hasType("writeboost"));
        assertEquals("installed strata-writecache", run("feature:install strata-writecache").trim());
        Await.until("the writecache target type back", 60, () -> hasType("writecache"));
    }

    @Test
    public void badInputGetsOneLineAndChangesNothing() throws Exception {
        Await.until("the delay target type", 60, () -> hasType("delay"));
        String unknown = run("feature:install strata-nosuch");
        assertEquals(unknown, 1, unknown.trim().lines().count());
        assertTrue(unknown, unknown.contains("no feature strata-nosuch (features: "));
        assertTrue(unknown, unknown.contains("strata-drivers"));
        assertTrue(run("feature:uninstall nosuch").contains("no feature nosuch (features: "));
        String needed = run("feature:uninstall strata-core");
        assertTrue(needed, needed.contains("is needed by installed"));
        assertFalse(needed, needed.contains("Exception"));
        assertTrue(run("feature:install").startsWith("usage: feature:install"));
        assertTrue(hasType("delay"));
    }

    /** A feature whose bundle is not in the framework comes from the repository directory, live. */
    @Test
    public void installTakesMissingBundlesFromTheRepository() throws Exception {
        Await.until("the delay target type", 60, () -> hasType("delay"));
        Bundle testkit = null;
        for (Bundle b : context.getBundles()) {
            if ("dev.strata.testkit".equals(b.getSymbolicName())) {
                testkit = b;
            }
        }
        assertTrue("the test kit bundle is installed", testkit != null);
        Path shipped = StrataOptions.bundleJar("dev.strata.testkit");
        testkit.uninstall(); // as in a distribution that does not ship it in bundle/
        Await.until("the delay target type to go", 60, () -> !hasType("delay"));
        assertTrue(line(run("feature:list"), "strata-testkit").contains("not installed"));

        Path repository = Path.of(context.getProperty("strata.repository.dir"));
        String missing = run("feature:install strata-testkit");
        assertEquals(missing, 1, missing.trim().lines().count());
        assertTrue(missing, missing.contains("not in the repository " + repository + ": " + shipped.getFileName()));
        assertFalse("a refused install changes nothing", hasType("delay"));

        Files.copy(shipped, repository.resolve(shipped.getFileName()));
        assertEquals("installed strata-testkit", run("feature:install strata-testkit").trim());
        Await.until("the delay target type back", 60, () -> hasType("delay"));
        boolean fromRepository = false;
        for (Bundle b : context.getBundles()) {
            if ("dev.strata.testkit".equals(b.getSymbolicName()) && b.getState() == Bundle.ACTIVE) {
                fromRepository = b.getLocation().equals(repository.resolve(shipped.getFileName()).toUri().toString());
            }
        }
        assertTrue("installed from the repository directory", fromRepository);
        assertTrue(line(run("feature:list"), "strata-testkit").contains(" installed"));
    }
}
