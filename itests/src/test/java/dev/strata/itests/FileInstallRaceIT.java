package dev.strata.itests;

import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import javax.inject.Inject;

import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.service.cm.ConfigurationAdmin;

import dev.strata.api.DeviceManager;
import dev.strata.api.DeviceState;

/**
 * The distribution's first start, over and over, with the real FileInstall: FileInstall turns
 * each {@code deploy/dev.strata.device-NAME.cfg} into a configuration, writes that configuration
 * back into the file at once (truncate, then write), and its next poll runs right after its first
 * scan — and could read a file in between, store it empty and write that back: 0 bytes, the
 * device never created (the default stack's backing0 in the fresh-clone run of ConsoleIT). The
 * device manager writes such an emptied definition back; every round here checks that every
 * device came up and every file still holds its definition.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class FileInstallRaceIT {

    private static final String WORK = "fileinstall-race";
    private static final int FILES = 16;
    /** Rounds of a first start; ten times as many with {@code -Dstrata.soak=true}. */
    private static final int ROUNDS = Boolean.getBoolean("strata.soak") ? 100 : 10;

    @Inject
    BundleContext context;

    @Inject
    DeviceManager manager;

    @Inject
    ConfigurationAdmin cm;

    @Configuration
    public Option[] config() {
        return StrataOptions.distribution(StrataOptions.workDir(WORK));
    }

    @Test
    public void definitionsFileInstallCreatesSurviveItsOwnWriteBackAndNextPoll() throws Exception {
        Path deploy = Path.of(context.getProperty("felix.fileinstall.dir"));
        Bundle fileInstall = bundle("org.apache.felix.fileinstall");
        fileInstall.stop();
        List<Path> files = new ArrayList<>();
        for (int i = 0; i < FILES; i++) {
            files.add(deploy.resolve("dev.strata.device-race" + i + ".cfg"));
        }
        for (int round = 1; round <= ROUNDS; round++) {
            int r = round;
            // as at a first start: the files are there as shipped, their configurations are not
            // (deleted while FileInstall is stopped, so it leaves the files alone)
            var existing = cm.listConfigurations("(name=race*)");
            if (existing != null) {
                for (var c : existing) {
                    c.delete();
                }
            }
            Await.until("round " + r + ": the devices removed with their configurations", 60,
                    () -> manager.list().stream().noneMatch(d -> d.name().startsWith("race")), () -> manager.list().toString());
            // written again: FileInstall stopped last round with write-backs still queued, and one
            // of an empty read then a restore may have done only the first (that is the stop, not
            // a first start; after a real restart Configuration Admin's copy restores the file)
            for (int i = 0; i < FILES; i++) {
                Files.writeString(files.get(i), "# a device of the race test\nname=race" + i + "\ntype=memory\narg.size=64k\n");
            }
            fileInstall.start();
            Await.until("round " + r + ": every device up and every file holding its definition", 60,
                    () -> allUp() && allDefined(files), () -> diagnose(files));
            fileInstall.stop();
        }
        for (int i = 0; i < FILES; i++) {
            var c = cm.listConfigurations("(name=race" + i + ")");
            assertNotNull("race" + i + " has its configuration", c);
            assertTrue("race" + i + " has its identity", c[0].getProperties().get("id") != null);
        }
        fileInstall.start();
    }

    /**
     * The same sequence without waiting for the poll to hit the window: the test makes
     * FileInstall's two updates itself, back to back, as its first scan and its next poll did —
     * the file's definition, then the empty read (nothing but the file's name) — before the
     * manager's deliveries run. The real FileInstall writes each of them back into the file
     * (outside {@code deploy/}, so its poll never reads it). Without the manager's write-back the
     * definition and the file were empty for good.
     */
    @Test
    public void aDefinitionEmptiedBeforeTheManagerReadItIsWrittenBackIntoConfigurationAndFile() throws Exception {
        Path elsewhere = Files.createDirectories(Path.of(context.getProperty("felix.fileinstall.dir")).resolveSibling("elsewhere"));
        for (int round = 1; round <= ROUNDS; round++) {
            List<Path> files = new ArrayList<>();
            List<String> names = new ArrayList<>();
            for (int i = 0; i < FILES; i++) {
                String name = "empty" + round + "x" + i;
                Path cfg = elsewhere.resolve("dev.strata.device-" + name + ".cfg");
                Files.writeString(cfg, "name=" + name + "\ntype=memory\narg.size=64k\n");
                String url = cfg.toUri().toString();
                var c = cm.getFactoryConfiguration("dev.strata.device", name, "?");
                java.util.Hashtable<String, Object> full = new java.util.Hashtable<>();
                full.put("name", name);
                full.put("type", "memory");
                full.put("arg.size", "64k");
                full.put("felix.fileinstall.filename", url);
                c.update(full);
                java.util.Hashtable<String, Object> empty = new java.util.Hashtable<>();
                empty.put("felix.fileinstall.filename", url);
                c.update(empty);
                files.add(cfg);
                names.add(name);
            }
            int r = round;
            Await.until("round " + r + ": every emptied definition written back, its device up", 60,
                    () -> names.stream().allMatch(n -> manager.info(n).filter(d -> d.state() == DeviceState.ACTIVE).isPresent())
                            && allDefined(files),
                    () -> diagnose(files));
            for (String n : names) {
                manager.remove(n, false);
            }
        }
    }

    private boolean allUp() {
        for (int i = 0; i < FILES; i++) {
            if (manager.info("race" + i).filter(d -> d.state() == DeviceState.ACTIVE).isEmpty()) {
                return false;
            }
        }
        return true;
    }

    private static boolean allDefined(List<Path> files) {
        for (Path f : files) {
            try {
                if (!Files.readString(f).contains("type")) {
                    return false;
                }
            } catch (IOException e) {
                return false;
            }
        }
        return true;
    }

    private String diagnose(List<Path> files) {
        StringBuilder sb = new StringBuilder("devices ").append(manager.list().stream().map(d -> d.name() + " " + d.state()).toList());
        for (Path f : files) {
            try {
                String name = f.getFileName().toString().replace("dev.strata.device-", "").replace(".cfg", "");
                var c = cm.listConfigurations("(service.pid=dev.strata.device~" + name + ")");
                sb.append("\n").append(f.getFileName()).append(": ").append(Files.size(f)).append(" bytes, configuration ")
                        .append(c == null ? "none" : String.valueOf(c[0].getProperties()));
            } catch (IOException | org.osgi.framework.InvalidSyntaxException e) {
                sb.append("\n").append(f.getFileName()).append(": ").append(e.getMessage());
            }
        }
        return sb.toString();
    }

    private Bundle bundle(String symbolicName) {
        for (Bundle b : context.getBundles()) {
            if (symbolicName.equals(b.getSymbolicName())) {
                return b;
            }
        }
        throw new AssertionError("no bundle " + symbolicName);
    }
}
