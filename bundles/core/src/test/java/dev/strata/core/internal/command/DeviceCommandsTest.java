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
                + "NAME   TYPE    SIZE     STATE   STACKED ON  USED BY         WHY\n"
                + "disk0  tfile   8.0 MiB  active  -           part0 (shared)  -\n"
                + "part0  linear  4.0 MiB  active  disk0       -               -\n", run("dev:list"));
        assertEquals("disk0 tfile path=" + img + " size=8M\npart0 linear device=disk0 offset=4M\n", run("dev:table"));
        assertEquals("part0 linear device=disk0 offset=4M\n", run("dev:table part0"));
        String info = run("dev:info part0");
        assertTrue(info.contains("size        4.0 MiB (4194304 bytes)\n"), info);
        assertTrue(info.contains("stacked on  disk0\n"), info);
        String status = run("dev:status part0");
        assertTrue(status.matches("(?s)state +active\ntype +linear\nsize +4\\.0 MiB\nblock_size +4\\.0 KiB\n.*"
                + "\nio_written_bytes +0 B\n.*"), status);
        assertTrue(status.contains("\noffset  ") && status.matches("(?s).*\noffset +4\\.0 MiB\nlength +4\\.0 MiB\n.*"), status);
        assertTrue(info.contains("block size  4.0 KiB\n"), info);
        assertTrue(run("dev:info --bytes part0").contains("block size  4096\n"));
        String raw = run("dev:status --bytes part0");
        assertTrue(raw.matches("(?s)state +active\ntype +linear\nsize +4194304\nblock_size +4096\n.*"
                + "\nio_written_bytes +0\n.*"), raw);
        assertTrue(error("dev:status a b").endsWith("usage: " + DeviceCommands.STATUS), error("dev:status a b"));
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
        assertEquals("argument 'size' is not of the form key=value; usage: " + DeviceCommands.CREATE,
                error("dev:create x tfile size"));
        assertEquals("no device named 'nope'; see dev:list", error("dev:info nope"));
        assertEquals("no device named 'nope'; see dev:list", error("dev:table nope"));
        assertEquals("no device named 'nope'; see dev:list", error("dev:status nope"));
        assertEquals("no device named 'nope'; see dev:list", error("dev:remove nope"));
        assertEquals("argument 'a' is given twice; usage: " + DeviceCommands.CREATE, error("dev:create x tfile a=1 a=2"));
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

    @Test
    void aMissingOrWrongWordPrintsTheUsage() throws Exception {
        assertEquals("missing the device name; usage: " + DeviceCommands.CREATE, error("dev:create"));
        assertEquals("missing the target type; usage: " + DeviceCommands.CREATE, error("dev:create x"));
        assertEquals("missing the device name; usage: " + DeviceCommands.INFO, error("dev:info"));
        assertEquals("missing the device name; usage: " + DeviceCommands.REMOVE, error("dev:remove"));
        assertEquals("unknown option --froce; usage: " + DeviceCommands.REMOVE, error("dev:remove --froce x"));
        assertEquals("unexpected 'y'; usage: " + DeviceCommands.SUSPEND, error("dev:suspend x y"));
        assertEquals("missing KEY VALUE; usage: " + DeviceCommands.MESSAGE, error("dev:message x"));
        assertEquals("missing the value of threshold; usage: " + DeviceCommands.MESSAGE, error("dev:message x threshold"));
        assertEquals("missing the new target type; usage: " + DeviceCommands.RELOAD, error("dev:reload x"));
        assertEquals("unexpected 'x'; usage: " + DeviceCommands.LIST, error("dev:list x"));
    }

    @Test
    void optionsTunablesAndSizes() throws Exception {
        String img = dir.resolve("disk0.img").toString();
        // KEY VALUE pairs as well as KEY=VALUE words
        assertEquals("created disk0: tfile, 8.0 MiB, active\n", run("dev:create disk0 tfile path " + img + " size=8M"));
        assertEquals("created scratch: linear, 8.0 MiB, active (transient: not stored, gone after a restart)\n",
                run("dev:create --transient scratch linear device=disk0"));
        String list = run("dev:list --bytes");
        assertTrue(list.contains("disk0    tfile   8388608  active "), list);
        assertTrue(list.contains("scratch  linear  8388608  active (transient)"), list);
        String info = run("dev:info --bytes disk0");
        assertTrue(info.contains("size        8388608\n"), info);
        assertTrue(info.matches("(?s).*\nid +[0-9a-f-]{36}\n.*"), info);
        assertTrue(run("dev:info scratch").contains("persisted   no (transient: gone after a restart)"));
        assertEquals("removed scratch\n", run("dev:remove --force scratch"));
        assertEquals("reloaded disk0: tfile, 4.0 MiB, active\n", run("dev:reload --force disk0 tfile path=" + img + " size 4M"));
    }

    @Test
    void messagesTakeKeyValueOrKeyEqualsValue() throws Exception {
        manager.addFactory(TestTargets.entry(new dev.strata.core.internal.CacheTestTarget.Factory(), "tcache"));
        run("dev:create disk0 tfile path=" + dir.resolve("d.img") + " size=1M");
        run("dev:create cache0 tfile path=" + dir.resolve("c.img") + " size=1M");
        run("dev:create wb0 tcache backing=disk0 cache=cache0");
        assertEquals("wb0: threshold=50\n", run("dev:message wb0 threshold 50"));
        assertEquals("wb0: threshold=60\n", run("dev:message wb0 threshold=60"));
        assertEquals("threshold=60", manager.definition("wb0").tunables().entrySet().iterator().next().toString());
        assertEquals("wb0: threshold=70 (this time only: not kept)\n", run("dev:message --transient wb0 threshold=70"));
        assertEquals("wb0: writeback=all (writeback is an action, not a setting: done once, not kept)\n",
                run("dev:message wb0 writeback all"));
        // the target's own note (an accepted change that waits), kept or not
        assertEquals("wb0: label=later1 (takes effect later)\n", run("dev:message wb0 label later1"));
        assertEquals("later1", manager.definition("wb0").tunables().get("label"));
        assertEquals("wb0: label=later2 (takes effect later; this time only: not kept)\n",
                run("dev:message --transient wb0 label later2"));
        assertTrue(run("dev:info wb0").contains("tunables    threshold=60"));
        String list = run("dev:list");
        assertTrue(list.matches("(?s).*\ncache0 +tfile +1\\.0 MiB +active +- +wb0 \\(exclusive\\) +-\n.*"), list);
        run("dev:message wb0 dirty 8192");
        assertEquals("wb0 holds 8,192 dirty blocks its backing device does not have; run cache:detach wb0 first, "
                + "or add --force to strand them on cache0", error("dev:remove wb0"));
        assertEquals("removed wb0\nwarning: removing wb0 stranded 8,192 dirty blocks on cache0 (its backing device "
                + "does not have them)\n", run("dev:remove wb0 --force"));
    }
}
