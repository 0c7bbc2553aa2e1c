package dev.strata.cache.commands.internal;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.felix.gogo.runtime.CommandProcessorImpl;
import org.apache.felix.gogo.runtime.threadio.ThreadIOImpl;
import org.apache.felix.service.command.CommandSession;

import dev.strata.api.TargetArguments;
import dev.strata.api.Target;
import dev.strata.api.TargetContext;
import dev.strata.api.TargetFactory;
import dev.strata.cache.writeboost.internal.WriteboostFactory;
import dev.strata.core.internal.DefinitionStore;
import dev.strata.core.internal.DeviceDefinition;
import dev.strata.core.internal.DeviceManagerImpl;
import dev.strata.core.internal.FactoryEntry;
import dev.strata.core.internal.Settings;
import dev.strata.testsupport.crash.CrashMode;
import dev.strata.testsupport.crash.CrashableDevice;
import dev.strata.testsupport.target.ForwardingBlockDevice;

/**
 * The real device manager (in process, no framework) with writeboost and {@code crash} leaf
 * devices over {@link CrashableDevice}s, a definition store that survives a "restart", and the
 * {@code cache:} commands in a Gogo session: for the live-change commands, which need the
 * manager's own swap, not a fake.
 */
final class LiveStack implements AutoCloseable {
    static final int BS = 4096;
    final Map<String, CrashableDevice> disks = new ConcurrentHashMap<>();
    final Store store;
    DeviceManagerImpl manager;
    /** Its own shell, stopped by close (Gogo's thread I/O is per thread: one started at a time). */
    private final ThreadIOImpl tio = new ThreadIOImpl();
    private final CommandProcessorImpl processor;
    final CacheCommands commands = new CacheCommands(null);
    final ReplaceCommand replace = new ReplaceCommand(null, System::nanoTime);
    /** Each crash target's writes pass one of these (by disk name), so a writeback can be held half-way. */
    final Map<String, GatedDevice> gates = new ConcurrentHashMap<>();
    CommandSession session;
    ByteArrayOutputStream out;

    LiveStack() {
        this(new Store());
    }

    private LiveStack(Store store) {
        this.store = store;
        tio.start();
        processor = new CommandProcessorImpl(tio);
        for (String f : List.of("stats", "set", "writeback", "detach", "mode", "controllers", "attach", "switch",
                "resize")) {
            processor.addCommand("cache", commands, f);
        }
        processor.addCommand("cache", replace, "replace");
        try {
            startManager();
        } catch (RuntimeException e) {
            processor.stop();
            tio.stop();
            throw e;
        }
    }

    private void startManager() {
        manager = new DeviceManagerImpl(store, Settings.of(60, 30));
        manager.addFactory(new FactoryEntry("crash", new CrashFactory(), "test", "0", 0, 1));
        manager.addFactory(new FactoryEntry("writeboost", new WriteboostFactory(), "test", "0", 0, 2));
        manager.addFactory(new FactoryEntry("linear", new dev.strata.core.internal.linear.LinearTargetFactory(), "test", "0",
                0, 3));
        manager.addFactory(new FactoryEntry("writecache",
                new dev.strata.cache.writecache.internal.WritecacheFactory(), "test", "0", 0, 4));
        manager.addFactory(new FactoryEntry("readcache", dev.strata.cache.readcache.internal.TestPolicies.factory(),
                "test", "0", 0, 5));
        manager.loadStored();
        commands.manager = manager;
        replace.manager = manager;
        out = new ByteArrayOutputStream();
        session = processor.createSession(new ByteArrayInputStream(new byte[0]), new PrintStream(out, true), System.err);
        session.put(".terminal", FakeTerminal.XTERM); // progress drawn as on a terminal
    }

    /** A {@code crash} device of {@code size} bytes named {@code name}. */
    void disk(String name, long size) throws IOException {
        disks.put(name, new CrashableDevice(name, size, BS));
        manager.create(name, "crash", Map.of("name", name));
    }

    String run(String line) throws Exception {
        return String.valueOf(session.execute(line));
    }

    /** The one-line message of a command that must fail as bad input. */
    String error(String line) {
        try {
            Object r = session.execute(line);
            org.junit.jupiter.api.Assertions.fail(line + " should fail, returned " + r);
            return null;
        } catch (Exception e) {
            org.junit.jupiter.api.Assertions.assertInstanceOf(IllegalArgumentException.class, e, line + ": " + e);
            org.junit.jupiter.api.Assertions.assertFalse(e.getMessage().contains("\n"), "one line: " + e.getMessage());
            return e.getMessage();
        }
    }

    /**
     * {@link #elsewhere} from a thread that a cancel interrupts (a command's own, in a hook): waits
     * for the answer through the interrupt, keeps the interrupt for the caller to see.
     */
    String elsewhereThroughInterrupts(java.util.concurrent.ExecutorService pool, String line) {
        java.util.concurrent.Future<String> f = pool.submit(() -> elsewhere(pool, line));
        boolean interrupted = false;
        try {
            for (;;) {
                try {
                    return f.get(60, java.util.concurrent.TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (Exception e) {
                    return "failed: " + e;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The exception {@code f} (a command run on a pool thread) failed with; fails the test if it returned. */
    static Exception failure(java.util.concurrent.Future<Object> f) throws Exception {
        try {
            Object r = f.get(60, java.util.concurrent.TimeUnit.SECONDS);
            org.junit.jupiter.api.Assertions.fail("should fail, returned " + r);
            return null;
        } catch (java.util.concurrent.ExecutionException e) {
            return (Exception) e.getCause();
        }
    }

    /** {@code line} run in another console on a {@code pool} thread (e.g. --cancel while a command runs); its result as text. */
    String elsewhere(java.util.concurrent.ExecutorService pool, String line) throws Exception {
        CommandSession c = console(new java.io.ByteArrayOutputStream());
        try {
            return String.valueOf(pool.submit(() -> c.execute(line)).get(60, java.util.concurrent.TimeUnit.SECONDS));
        } finally {
            c.close();
        }
    }

    /** Another console (its own session, output to {@code out}), e.g. for cache:detach --cancel. */
    CommandSession console(java.io.OutputStream out) {
        CommandSession c = processor.createSession(new ByteArrayInputStream(new byte[0]), new PrintStream(out, true), System.err);
        c.put(".terminal", FakeTerminal.XTERM); // progress drawn as on a terminal
        return c;
    }

    String output() {
        return out.toString(StandardCharsets.UTF_8);
    }

    /** Power cut: every disk loses what it had not made durable, and is dead until {@link #restart}. */
    void powerCut(long seed) {
        Random r = new Random(seed);
        for (CrashableDevice d : disks.values()) {
            if (d.alive()) {
                d.crash(CrashMode.SUBSET, r);
            }
        }
    }

    /**
     * The process is gone and starts again: the old manager is dropped without closing anything
     * (its disks are dead), the disks power on with what survived, a new manager loads {@code stored}.
     */
    void restart(Map<String, DeviceDefinition> stored) {
        session.close();
        commands.manager = null;
        // the old manager's targets are over dead disks; stopping it only fails quietly on them
        manager.stop();
        disks.replaceAll((n, d) -> d.alive() ? d : d.restart());
        store.replace(stored);
        startManager();
        // the start goes on in the manager's lanes after loadStored (an interrupted replace's
        // journal is deleted once the device it blanks is up): a check right after the restart
        // found the journal still there on a loaded CI machine
        try {
            if (!manager.awaitQuiet(60, java.util.concurrent.TimeUnit.SECONDS)) {
                throw new AssertionError("the restarted manager's start-up tasks did not finish within 60 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while the restarted manager started", e);
        }
    }

    @Override
    public void close() {
        session.close();
        manager.stop();
        processor.stop();
        tio.stop();
    }

    /** {@code crash name=NAME}: a target over the {@link CrashableDevice} of that name. */
    final class CrashFactory implements TargetFactory {
        @Override
        public String usage() {
            return "crash name=NAME";
        }

        @Override
        public List<String> lowerDevices(Map<String, String> arguments) {
            TargetArguments.of("crash", arguments, Set.of("name"));
            return List.of();
        }

        @Override
        public Target create(TargetContext context) throws IOException {
            String name = TargetArguments.of("crash", context.arguments(), Set.of("name")).string("name");
            CrashableDevice d = disks.get(name);
            if (d == null) {
                throw new IOException("crash: no disk " + name);
            }
            GatedDevice g = new GatedDevice(d);
            gates.put(name, g);
            return new CrashTarget(g);
        }
    }

    /** A leaf target over a crashable disk. */
    static final class CrashTarget extends ForwardingBlockDevice implements Target {
        CrashTarget(dev.strata.api.BlockDevice d) {
            super(d);
        }

        @Override
        public String type() {
            return "crash";
        }

        @Override
        public Map<String, String> status() {
            return new LinkedHashMap<>();
        }
    }

    /** An in-memory definition store; keys in creation order, upper devices first when listed. */
    static final class Store implements DefinitionStore {
        private final Map<String, DeviceDefinition> byKey = new LinkedHashMap<>();
        private int next;
        private int crashPoint = -1;
        private int points;
        private Runnable crash;

        /**
         * Runs {@code crash} at crash point {@code point} of the mutations from now on: point 2k is
         * just before mutation k+1 takes effect, 2k+1 just after it.
         */
        synchronized void armCrash(int point, Runnable crash) {
            this.crashPoint = point;
            this.points = 0;
            this.crash = crash;
        }

        private void point() {
            if (crash != null && points++ == crashPoint) {
                Runnable c = crash;
                crash = null;
                c.run();
            }
        }

        @Override
        public synchronized List<String> keys() {
            List<String> k = new ArrayList<>(byKey.keySet());
            java.util.Collections.reverse(k);
            return k;
        }

        @Override
        public synchronized String save(DeviceDefinition def) {
            point();
            String key = saveNow(def);
            point();
            return key;
        }

        private String saveNow(DeviceDefinition def) {
            for (Map.Entry<String, DeviceDefinition> e : byKey.entrySet()) {
                if (e.getValue().name().equals(def.name())) {
                    e.setValue(def);
                    return e.getKey();
                }
            }
            String key = "dev.strata.device~" + def.name() + "#" + (++next);
            byKey.put(key, def);
            return key;
        }

        @Override
        public synchronized void delete(String name) {
            point();
            byKey.values().removeIf(d -> d.name().equals(name));
            point();
        }

        @Override
        public synchronized Optional<DeviceDefinition> load(String key) {
            return Optional.ofNullable(byKey.get(key));
        }

        synchronized Map<String, DeviceDefinition> snapshot() {
            return new LinkedHashMap<>(byKey);
        }

        synchronized void replace(Map<String, DeviceDefinition> contents) {
            byKey.clear();
            byKey.putAll(contents);
            next += 1000;
        }
    }
}
