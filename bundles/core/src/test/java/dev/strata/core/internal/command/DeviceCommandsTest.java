package dev.strata.core.internal.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.lang.reflect.Method;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;

import org.apache.felix.gogo.runtime.CommandProcessorImpl;
import org.apache.felix.gogo.runtime.threadio.ThreadIOImpl;
import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Descriptor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.strata.api.InvalidArgumentException;
import dev.strata.core.internal.DeviceManagerImpl;
import dev.strata.core.internal.MemStore;
import dev.strata.core.internal.Settings;
import dev.strata.core.internal.TestTargets;
import dev.strata.core.internal.linear.LinearTargetFactory;

/** The commands through a real Gogo command processor, parsed as the shell parses them. */
class DeviceCommandsTest {
    static final String[] FUNCTIONS = {"create", "list", "info", "status", "table", "message", "suspend", "resume",
        "reload", "remove", "targets"};

    @TempDir
    Path dir;
    DeviceManagerImpl manager;
    ThreadIOImpl tio;
    CommandProcessorImpl processor;
    CommandSession session;

    @BeforeEach
    void start() {
        manager = new DeviceManagerImpl(new MemStore(), Settings.of(60, 30));
        manager.addFactory(TestTargets.entry(new TestTargets.FileFactory(), "tfile"));
        manager.addFactory(new dev.strata.core.internal.FactoryEntry("linear", new LinearTargetFactory(),
                "dev.strata.core", "0.1.0", 0, 1000));
        tio = new ThreadIOImpl();
        tio.start();
        processor = new CommandProcessorImpl(tio);
        DeviceCommands commands = new DeviceCommands(manager);
        for (String f : FUNCTIONS) {
            processor.addCommand("dev", commands, f);
        }
        session = processor.createSession(new ByteArrayInputStream(new byte[0]), new ByteArrayOutputStream(),
                new ByteArrayOutputStream());
    }

    @AfterEach
    void stop() {
        session.close();
        processor.stop();
        tio.stop();
        manager.stop();
    }

    String run(String line) throws Exception {
        return String.valueOf(session.execute(line));
    }

    @Test
    void aStackThroughTheShell() throws Exception {
        String img = dir.resolve("disk0.img").toString();
        assertEquals("created disk0: tfile, 8.0 MiB, active\n", run("dev:create disk0 tfile path=" + img + " size=8M"));
        assertEquals("created part0: linear, 4.0 MiB, active\n",
                run("dev:create part0 linear device=disk0 offset=4M"));
        assertEquals(""
                + "NAME   TYPE    SIZE     STATE   STACKED ON  USED BY\n"
                + "disk0  tfile   8.0 MiB  active  -           part0\n"
                + "part0  linear  4.0 MiB  active  disk0       -\n", run("dev:list"));
        assertEquals("disk0 tfile path=" + img + " size=8M\npart0 linear device=disk0 offset=4M\n", run("dev:table"));
        assertEquals("part0 linear device=disk0 offset=4M\n", run("dev:table part0"));
        String info = run("dev:info part0");
        assertTrue(info.contains("size        4.0 MiB (4194304 bytes)\n"), info);
        assertTrue(info.contains("stacked on  disk0\n"), info);
        String status = run("dev:status part0");
        assertTrue(status.matches("(?s)state +active\ntype +linear\n.*\nio_written_bytes  0\n.*"), status);
        assertEquals("suspended part0\n", run("dev:suspend part0"));
        assertTrue(run("dev:list").contains("part0  linear  4.0 MiB  suspended"));
        assertEquals("resumed part0\n", run("dev:resume part0"));
        assertEquals("reloaded part0: linear, 2.0 MiB, active\n", run("dev:reload part0 linear device=disk0 length=2M"));
        String targets = run("dev:targets");
        assertTrue(targets.startsWith("TYPE    BUNDLE           VERSION  USAGE\n"
                + "linear  dev.strata.core  0.1.0    linear device=NAME [offset=0] [length=rest]\n"), targets);
        assertEquals("removed part0\n", run("dev:remove part0"));
        assertEquals("removed disk0\n", run("dev:remove disk0"));
        assertTrue(run("dev:list").startsWith("no devices"));
    }

    @Test
    void mistakesAreOneLine() throws Exception {
        assertEquals("unknown target type 'nosuch'; available: linear, tfile", error("dev:create x nosuch a=b"));
        assertEquals("argument 'size' is not of the form key=value", error("dev:create x tfile size"));
        assertEquals("no device named 'nope'; see dev:list", error("dev:info nope"));
        assertEquals("no device named 'nope'; see dev:list", error("dev:table nope"));
        assertEquals("no device named 'nope'; see dev:list", error("dev:status nope"));
        assertEquals("no device named 'nope'; see dev:list", error("dev:remove nope"));
        assertEquals("argument 'a' is given twice", error("dev:create x tfile a=1 a=2"));
    }

    private String error(String line) {
        Exception e = assertThrows(InvalidArgumentException.class, () -> session.execute(line));
        return e.getMessage();
    }

    @Test
    void everyCommandAndParameterIsDescribed() {
        Set<String> described = new TreeSet<>();
        for (Method m : DeviceCommands.class.getDeclaredMethods()) {
            if (!java.lang.reflect.Modifier.isPublic(m.getModifiers())) {
                continue;
            }
            assertTrue(m.isAnnotationPresent(Descriptor.class), m.getName());
            for (java.lang.annotation.Annotation[] p : m.getParameterAnnotations()) {
                assertTrue(java.util.Arrays.stream(p).anyMatch(a -> a instanceof Descriptor), m.getName() + " parameter");
            }
            described.add(m.getName());
        }
        assertEquals(new TreeSet<>(java.util.List.of(FUNCTIONS)), described);
    }
}
