package dev.strata.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;

import javax.inject.Inject;

import org.apache.felix.service.command.CommandProcessor;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.BundleContext;

import dev.strata.api.DeviceManager;
import dev.strata.api.DeviceState;

/** A stack built, changed and torn down through the Gogo shell, in a real Felix. */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class ShellIT {

    private static final String WORK = "shell";

    @Inject
    BundleContext context;

    @Inject
    CommandProcessor processor;

    @Inject
    DeviceManager manager;

    private GogoSession shell;
    private Path dir;

    @Configuration
    public Option[] config() {
        return StrataOptions.distribution(StrataOptions.workDir(WORK));
    }

    @Before
    public void openSession() throws Exception {
        dir = Path.of(System.getProperty("strata.itests.work", "target/itest-work")).resolve(WORK).resolve("data").toAbsolutePath();
        Files.createDirectories(dir);
        shell = GogoSession.open(context, processor, manager, "dev:create", new ByteArrayOutputStream(), "file");
    }

    @After
    public void closeSession() {
        if (shell != null) {
            shell.close();
        }
    }

    private String run(String command) throws Exception {
        return shell.run(command);
    }

    /** A failing command: the exception Gogo hands the launcher, whose message it prints as one line. */
    private Exception failure(String command) {
        return shell.failure(command);
    }

    @Test
    public void buildReloadAndRemoveAStack() throws Exception {
        String img = dir.resolve("d1.img").toString();
        assertTrue(run("dev:create d1 file path=" + img + " size=16M create=true").contains("d1"));
        assertTrue(run("dev:create l1 linear device=d1 offset=1M length=4M").contains("l1"));

        String list = run("dev:list");
        assertTrue(list, list.lines().anyMatch(l -> l.startsWith("d1") && l.contains("file") && l.contains("l1")));
        assertTrue(list, list.lines().anyMatch(l -> l.startsWith("l1") && l.contains("linear") && l.contains("4.0 MiB")));

        String status = run("dev:status l1");
        assertTrue(status, status.lines().anyMatch(l -> l.matches("state\\s+active")));
        assertTrue(run("dev:info l1"), run("dev:info l1").contains("d1"));
        assertTrue(run("dev:table"), run("dev:table").contains("l1 linear"));
        assertTrue(run("dev:targets"), run("dev:targets").contains("dev.strata.driver.file"));

        run("dev:suspend l1");
        assertEquals(DeviceState.SUSPENDED, manager.info("l1").orElseThrow().state());
        run("dev:resume l1");
        assertEquals(DeviceState.ACTIVE, manager.info("l1").orElseThrow().state());

        run("dev:reload l1 linear device=d1 offset=2M length=8M");
        assertEquals(8L << 20, manager.info("l1").orElseThrow().size());
        assertEquals("2M", manager.info("l1").orElseThrow().arguments().get("offset"));

        Exception inUse = failure("dev:remove d1");
        assertOneLineUserError(inUse);
        assertTrue("refused while l1 uses it: " + inUse.getMessage(), manager.info("d1").isPresent());

        run("dev:remove l1");
        run("dev:remove d1");
        assertFalse(manager.info("d1").isPresent());
        assertTrue("data stays on disk", Files.exists(Path.of(img)));
    }

    @Test
    public void mistakesAreOneLineAndChangeNothing() throws Exception {
        int before = manager.list().size();
        assertOneLineUserError(failure("dev:create x nosuchtype size=1M"));
        assertOneLineUserError(failure("dev:create x file path=" + dir.resolve("x.img") + " size=1000 create=true"));
        assertOneLineUserError(failure("dev:create x file size=1M"));
        assertOneLineUserError(failure("dev:status nosuchdevice"));
        assertEquals(before, manager.list().size());
        assertFalse(Files.exists(dir.resolve("x.img")));
    }

    private static void assertOneLineUserError(Exception e) {
        assertTrue("a user mistake is an IllegalArgumentException (InvalidArgumentException): " + e, e instanceof IllegalArgumentException);
        String m = e.getMessage();
        assertNotNull(m);
        assertFalse("one line: " + m, m.contains("\n"));
        assertFalse(m.isBlank());
    }
}
