package dev.strata.core.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceHandle;
import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceState;
import dev.strata.api.DeviceTimeoutException;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.TargetArguments;
import dev.strata.core.internal.TestTargets.FileFactory;
import dev.strata.core.internal.TestTargets.ProbeFactory;
import dev.strata.core.internal.linear.LinearTargetFactory;

class DeviceManagerTest {
    static final int MIB = 1 << 20;

    @TempDir
    Path dir;
    MemStore store;
    DeviceManagerImpl m;
    FileFactory files;
    ProbeFactory probes;
    FactoryEntry fileEntry;
    final ExecutorService pool = Executors.newCachedThreadPool();

    @BeforeEach
    void start() {
        store = new MemStore();
        m = new DeviceManagerImpl(store, Settings.of(60, 30));
        files = new FileFactory();
        probes = new ProbeFactory();
        fileEntry = TestTargets.entry(files, "tfile");
        m.addFactory(fileEntry);
        m.addFactory(TestTargets.entry(probes, "probe"));
        m.addFactory(TestTargets.entry(new LinearTargetFactory(), "linear"));
    }

    @AfterEach
    void stop() throws InterruptedException {
        probes.release.countDown();
        m.stop();
        pool.shutdownNow();
        assertTrue(pool.awaitTermination(30, TimeUnit.SECONDS));
    }

    static Map<String, String> args(String... kv) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return m;
    }

    DeviceInfo disk(String name, long size) throws IOException {
        return m.create(name, "tfile", args("path", dir.resolve(name + ".img").toString(), "size", Long.toString(size)));
    }

    static ByteBuffer pattern(int len, int seed) {
        ByteBuffer b = ByteBuffer.allocate(len);
        for (int i = 0; i < len; i++) {
            b.put((byte) (seed * 31 + i * 7));
        }
        return b.flip();
    }

    static byte[] read(DeviceHandle h, long off, int len) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(len);
        h.read(off, b);
        return b.array();
    }

    void quiet() throws InterruptedException {
        assertTrue(m.awaitQuiet(60, TimeUnit.SECONDS), "background work did not finish");
    }

    // ---------------------------------------------------------------- basics

    @Test
    void createListInfoTable() throws IOException {
        DeviceInfo d = disk("disk0", 4 * MIB);
        assertEquals(DeviceState.ACTIVE, d.state());
        assertEquals(4 * MIB, d.size());
        DeviceInfo part = m.create("part0", "linear", args("device", "disk0", "offset", "1M", "length", "2M"));
        assertEquals(2 * MIB, part.size());
        assertEquals(List.of("disk0"), part.lower());
        assertEquals(List.of("part0"), m.info("disk0").orElseThrow().holders());
        assertEquals(List.of("disk0", "part0"), m.list().stream().map(DeviceInfo::name).toList());
        assertEquals("part0 linear device=disk0 offset=1M length=2M", m.definitions().get(1).tableLine());
        assertEquals(2, store.snapshot().size());
        Map<String, String> st = m.status("part0");
        assertEquals("active", st.get("state"));
        assertEquals("disk0", st.get("device"));
    }

    @Test
    void ioThroughAStackLandsAtTranslatedOffsets() throws IOException {
        disk("disk0", 4 * MIB);
        m.create("part0", "linear", args("device", "disk0", "offset", "1M"));
        try (DeviceHandle part = m.open("part0", "test"); DeviceHandle disk = m.open("disk0", "test")) {
            part.write(8192, pattern(4096, 1), 0);
            part.flush();
            assertArrayEquals(pattern(4096, 1).array(), read(disk, MIB + 8192, 4096));
        }
        assertEquals("1", m.status("part0").get("io_writes"));
        assertEquals("4096", m.status("disk0").get("io_written_bytes"));
    }

    // ---------------------------------------------------------------- bad input changes nothing

    void unchanged(Executable action, String expectedMessagePart) throws Exception {
        List<DeviceInfo> before = m.list();
        Map<String, DeviceDefinition> stored = store.snapshot();
        List<DeviceDefinition> defs = m.definitions();
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, action);
        assertTrue(e.getMessage().contains(expectedMessagePart), e.getMessage());
        assertFalse(e.getMessage().contains("\n"), "one line: " + e.getMessage());
        assertEquals(before, m.list());
        assertEquals(stored, store.snapshot());
        assertEquals(defs, m.definitions());
    }

    @Test
    void badInputChangesNothing() throws Exception {
        disk("disk0", 4 * MIB);
        m.create("part0", "linear", args("device", "disk0", "length", "1M"));
        unchanged(() -> m.create("x", "nosuch", args()), "unknown target type 'nosuch'; available: linear, probe, tfile");
        unchanged(() -> m.create("x", "linear", args()), "missing argument 'device");
        unchanged(() -> m.create("x", "linear", args("device", "disk0", "bogus", "1")), "unknown argument 'bogus'");
        unchanged(() -> m.create("x", "linear", args("device", "disk0", "offset", "12x")), "not a size");
        unchanged(() -> m.create("x", "linear", args("device", "disk0", "offset", "1000")), "not a multiple of 512");
        unchanged(() -> m.create("x", "linear", args("device", "disk0", "length", "8M")), "past the end");
        unchanged(() -> m.create("x", "linear", args("device", "nodisk")), "no device named 'nodisk'");
        unchanged(() -> m.create("disk0", "linear", args("device", "part0")), "already exists");
        unchanged(() -> m.create("-bad", "linear", args("device", "disk0")), "invalid device name");
        unchanged(() -> m.create("a".repeat(65), "linear", args("device", "disk0")), "invalid device name");
        unchanged(() -> m.create("x", "tfile", args("path", dir.resolve("x").toString(), "size", "1000")),
                "not a multiple of 512");
        unchanged(() -> m.remove("disk0"), "in use by part0");
        unchanged(() -> m.remove("nosuch"), "see dev:list");
        unchanged(() -> m.reload("part0", "linear", args("device", "disk0", "offset", "5M")), "at or past the end");
        unchanged(() -> m.reload("part0", "nosuch", args()), "unknown target type");
        unchanged(() -> m.reload("disk0", "linear", args("device", "part0")), "a device cannot be stacked on itself");
        unchanged(() -> m.suspend("nosuch"), "see dev:list");
        unchanged(() -> m.resume("disk0"), "is not suspended");
        unchanged(() -> m.message("disk0", "nosuch", "1"), "has no tunable 'nosuch'");
        unchanged(() -> m.open("nosuch", "nbd:x"), "see dev:list");
        unchanged(() -> TargetArguments.parse(List.of("novalue")), "not of the form key=value");
        // the stack still works
        try (DeviceHandle h = m.open("part0", "t")) {
            h.write(0, pattern(512, 3), 0);
            assertArrayEquals(pattern(512, 3).array(), read(h, 0, 512));
        }
    }

    @Test
    void aFailingBuildCreatesNothing() throws Exception {
        IOException e = assertThrows(IOException.class, () -> m.create("d", "tfile",
                args("path", dir.resolve("d").toString(), "size", "1M", "fail", "true")));
        assertTrue(e.getMessage().contains("cannot open"));
        assertTrue(m.list().isEmpty());
        assertTrue(store.snapshot().isEmpty());
        // the name is free again
        disk("d", MIB);
    }

    @Test
    void aFailingStoreCreatesNothing() throws Exception {
        store.failSaves = true;
        IOException e = assertThrows(IOException.class, () -> disk("d", MIB));
        assertTrue(e.getMessage().startsWith("could not persist device 'd'"), e.getMessage());
        assertTrue(m.list().isEmpty());
        assertEquals(1, files.closed.get(), "the built target was closed");
    }

    // ---------------------------------------------------------------- removal

    @Test
    void removalIsRefusedWhileInUse() throws Exception {
        disk("disk0", MIB);
        m.create("part0", "linear", args("device", "disk0"));
        DeviceHandle h = m.open("part0", "nbd:export1");
        assertEquals(List.of("nbd:export1"), m.info("part0").orElseThrow().holders());
        unchanged(() -> m.remove("part0"), "in use by nbd:export1");
        h.close();
        assertThrows(IOException.class, () -> h.read(0, ByteBuffer.allocate(512)));
        m.remove("part0");
        m.remove("disk0");
        assertTrue(m.list().isEmpty());
        assertTrue(store.snapshot().isEmpty());
        assertEquals(1, files.closed.get());
    }

    // ---------------------------------------------------------------- gate semantics through the manager

    /** An interrupted dev:remove must still wait for the request in flight before closing the target. */
    @Test
    void interruptedRemoveStillDrainsBeforeClosing() throws Exception {
        m.create("p", "probe", args("size", "1M"));
        DeviceHandle h = m.open("p", "t");
        probes.hold(1);
        Future<?> inflight = pool.submit(() -> {
            h.write(0, pattern(512, 1), 0);
            return null;
        });
        assertTrue(probes.entered.await(30, TimeUnit.SECONDS));
        h.close(); // the use ends; its request is still running
        AtomicBoolean interruptKept = new AtomicBoolean();
        java.util.concurrent.atomic.AtomicReference<Thread> remover = new java.util.concurrent.atomic.AtomicReference<>();
        Future<?> removing = pool.submit(() -> {
            remover.set(Thread.currentThread());
            m.remove("p");
            interruptKept.set(Thread.interrupted());
            return null;
        });
        GateTest.await(() -> m.info("p").map(d -> d.state() != DeviceState.ACTIVE).orElse(true), "the gate to close");
        Thread t = remover.get();
        t.interrupt(); // e.g. Ctrl-C while dev:remove waits for the drain
        // either remove gave up (the bug) or it took the interrupt and went back to waiting
        GateTest.await(() -> removing.isDone() || (!t.isInterrupted() && t.getState() == Thread.State.TIMED_WAITING),
                "remove to take the interrupt");
        assertFalse(removing.isDone(), "remove returned with a request in flight");
        assertEquals(0, probes.closes.get(), "target closed with a request in flight");
        probes.release.countDown();
        inflight.get(30, TimeUnit.SECONDS);
        removing.get(30, TimeUnit.SECONDS);
        assertEquals(1, probes.closes.get());
        assertTrue(interruptKept.get(), "the caller's interrupt is kept");
    }

    @Test
    void suspendWaitsForInFlightAndHeldIoCompletesOnlyAfterResume() throws Exception {
        m.create("p", "probe", args("size", "1M"));
        DeviceHandle h = m.open("p", "t");
        probes.hold(1);
        Future<?> inflight = pool.submit(() -> {
            h.write(0, pattern(512, 1), 0);
            return null;
        });
        assertTrue(probes.entered.await(30, TimeUnit.SECONDS));
        Future<?> suspending = pool.submit(() -> {
            m.suspend("p");
            return null;
        });
        GateTest.await(() -> m.info("p").orElseThrow().state() == DeviceState.SUSPENDED, "the gate to close");
        assertFalse(suspending.isDone(), "suspend returned with a request in flight");
        assertEquals(0, probes.suspends.get(), "target suspended with a request in flight");
        probes.release.countDown();
        suspending.get(30, TimeUnit.SECONDS);
        inflight.get(30, TimeUnit.SECONDS);
        assertEquals(1, probes.suspends.get());

        // I/O issued while suspended waits at the gate and completes after resume, not before
        AtomicBoolean done = new AtomicBoolean();
        Future<?> waiting = pool.submit(() -> {
            h.write(512, pattern(512, 2), 0);
            done.set(true);
            return null;
        });
        GateTest.await(() -> "1".equals(statusOf("p", "waiting")), "the write to wait at the gate");
        assertFalse(done.get());
        m.resume("p");
        waiting.get(30, TimeUnit.SECONDS);
        assertTrue(done.get());
        assertEquals(1, probes.resumes.get());
        Map<String, String> st = m.status("p");
        assertEquals("active", st.get("state"), "the device's own keys come first");
        assertEquals("probing", st.get("target_state"), "a colliding target key is kept under target_");
        assertEquals("1048576", st.get("probe_bytes"));
        assertEquals("2", st.get("io_writes"));
        assertArrayEquals(pattern(512, 2).array(), read(h, 512, 512));
        h.close();
    }

    String statusOf(String dev, String key) {
        try {
            return m.status(dev).get(key);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void aRequestAtASuspendedDeviceFailsAfterTheDeadline() throws Exception {
        m.settings(Settings.of(1, 30));
        m.create("p", "probe", args("size", "1M"));
        m.suspend("p");
        try (DeviceHandle h = m.open("p", "t")) {
            DeviceTimeoutException e = assertThrows(DeviceTimeoutException.class, () -> h.read(0, ByteBuffer.allocate(512)));
            assertTrue(e.getMessage().contains("closed gate"), e.getMessage());
        }
        m.resume("p");
    }

    @Test
    void concurrentRequestsAreNotSerialisedByTheGate() throws Exception {
        m.create("p", "probe", args("size", "1M"));
        int n = 8;
        probes.hold(n);
        List<Future<?>> fs = new ArrayList<>();
        try (DeviceHandle h = m.open("p", "t")) {
            for (int i = 0; i < n; i++) {
                int k = i;
                fs.add(pool.submit(() -> {
                    h.write(k * 4096L, pattern(4096, k), 0);
                    return null;
                }));
            }
            // all n requests are inside the target at the same time
            assertTrue(probes.entered.await(30, TimeUnit.SECONDS), "requests were serialised");
            assertEquals(n, probes.inside.get());
            probes.release.countDown();
            for (Future<?> f : fs) {
                f.get(30, TimeUnit.SECONDS);
            }
        }
    }

    // ---------------------------------------------------------------- reload

    @Test
    void reloadSwapsTheTargetSharedLowerOrder() throws Exception {
        disk("disk0", 4 * MIB);
        m.create("part0", "linear", args("device", "disk0", "offset", "0", "length", "1M"));
        try (DeviceHandle disk = m.open("disk0", "t"); DeviceHandle part = m.open("part0", "t")) {
            disk.write(2 * MIB, pattern(4096, 9), 0);
            DeviceInfo after = m.reload("part0", "linear", args("device", "disk0", "offset", "2M", "length", "2M"));
            assertEquals(2 * MIB, after.size());
            assertEquals(DeviceState.ACTIVE, after.state());
            assertArrayEquals(pattern(4096, 9).array(), read(part, 0, 4096), "the handle now sees the new window");
            assertEquals(args("device", "disk0", "offset", "2M", "length", "2M"),
                    store.snapshot().values().stream().filter(d -> d.name().equals("part0")).findFirst().orElseThrow()
                            .arguments());
        }
    }

    @Test
    void reloadToADifferentLowerBuildsFirst() throws Exception {
        disk("a", MIB);
        disk("b", MIB);
        m.create("top", "linear", args("device", "a"));
        try (DeviceHandle b = m.open("b", "t"); DeviceHandle top = m.open("top", "t")) {
            b.write(0, pattern(512, 5), 0);
            m.reload("top", "linear", args("device", "b"));
            assertArrayEquals(pattern(512, 5).array(), read(top, 0, 512));
            assertEquals(List.of("b"), m.info("top").orElseThrow().lower());
            assertEquals(List.of(), m.info("a").orElseThrow().holders(), "top no longer uses a");
            // a failing build over yet another device changes nothing and does not pause
            unchanged(() -> m.reload("top", "linear", args("device", "a", "length", "2M")), "past the end");
            assertArrayEquals(pattern(512, 5).array(), read(top, 0, 512));
        }
    }

    @Test
    void aReloadThatFailsToBuildKeepsTheOldTargetRunning() throws Exception {
        disk("disk0", MIB);
        try (DeviceHandle h = m.open("disk0", "t")) {
            h.write(0, pattern(512, 7), BlockDevice.FUA);
            Map<String, DeviceDefinition> stored = store.snapshot();
            IOException e = assertThrows(IOException.class, () -> m.reload("disk0", "tfile",
                    args("path", dir.resolve("disk0.img").toString(), "size", "1M", "fail", "true")));
            assertTrue(e.getMessage().contains("cannot open"), e.getMessage());
            assertEquals(DeviceState.ACTIVE, m.info("disk0").orElseThrow().state());
            assertEquals(stored, store.snapshot());
            assertArrayEquals(pattern(512, 7).array(), read(h, 0, 512), "reopened from its on-disk state");
            assertEquals(2, files.opened.get(), "old closed before the new was built, then reopened");
        }
    }

    @Test
    void reloadOfASuspendedDeviceKeepsItSuspended() throws Exception {
        disk("disk0", 2 * MIB);
        m.create("part0", "linear", args("device", "disk0"));
        m.suspend("part0");
        m.reload("part0", "linear", args("device", "disk0", "length", "1M"));
        assertEquals(DeviceState.SUSPENDED, m.info("part0").orElseThrow().state());
        m.resume("part0");
        assertEquals(DeviceState.ACTIVE, m.info("part0").orElseThrow().state());
    }

    // ---------------------------------------------------------------- persistence and start order

    @Test
    void storedDevicesComeBackInDependencyOrder() throws Exception {
        disk("base", 4 * MIB);
        m.create("mid", "linear", args("device", "base", "offset", "1M"));
        m.create("top", "linear", args("device", "mid", "offset", "1M"));
        try (DeviceHandle top = m.open("top", "t")) {
            top.write(0, pattern(4096, 4), BlockDevice.FUA);
        }
        List<DeviceDefinition> before = m.definitions();
        m.stop();

        // a new manager: definitions arrive top first, factories after them
        m = new DeviceManagerImpl(store, Settings.of(60, 30));
        List<String> keys = new ArrayList<>(store.snapshot().keySet());
        java.util.Collections.reverse(keys);
        for (String k : keys) {
            m.definitionChanged(k);
        }
        quiet();
        assertEquals(3, m.list().size());
        m.list().forEach(d -> assertEquals(DeviceState.WAITING_FOR_TARGET, d.state(), d.name()));
        assertThrows(InvalidArgumentException.class, () -> m.create("base", "linear", args("device", "x")));
        m.addFactory(TestTargets.entry(new LinearTargetFactory(), "linear"));
        quiet();
        assertEquals("target type 'tfile'", statusOf("base", "waiting_for"));
        assertEquals("device 'base'", statusOf("mid", "waiting_for"));
        m.addFactory(TestTargets.entry(files, "tfile"));
        quiet();
        m.list().forEach(d -> assertEquals(DeviceState.ACTIVE, d.state(), d.name()));
        assertEquals(before, m.definitions());
        assertEquals(List.of("mid"), m.info("base").orElseThrow().holders());
        try (DeviceHandle base = m.open("base", "t")) {
            assertArrayEquals(pattern(4096, 4).array(), read(base, 2 * MIB, 4096));
        }
        unchanged(() -> m.remove("mid"), "in use by top");
    }

    @Test
    void loadStoredBuildsTheStackOnTheCallingThread() throws Exception {
        disk("base", 4 * MIB);
        m.create("mid", "linear", args("device", "base", "offset", "1M"));
        m.create("top", "linear", args("device", "mid", "offset", "1M"));
        List<DeviceDefinition> before = m.definitions();
        m.stop();
        m = new DeviceManagerImpl(store, Settings.of(60, 30));
        m.addFactory(TestTargets.entry(new LinearTargetFactory(), "linear"));
        m.addFactory(TestTargets.entry(files, "tfile"));
        m.loadStored(); // keys come newest first: top, mid, base
        m.list().forEach(d -> assertEquals(DeviceState.ACTIVE, d.state(), d.name()));
        assertEquals(before, m.definitions());
        assertEquals(2 * MIB, m.info("top").orElseThrow().size());
    }

    @Test
    void externalDefinitionsCreateAndDeleteDevices() throws Exception {
        String key = store.putExternal(new DeviceDefinition("ext", "tfile",
                args("path", dir.resolve("ext.img").toString(), "size", "1M")));
        m.definitionChanged(key).get(30, TimeUnit.SECONDS);
        quiet();
        assertEquals(DeviceState.ACTIVE, m.info("ext").orElseThrow().state());
        // echo of an unchanged definition: nothing happens
        m.definitionChanged(key).get(30, TimeUnit.SECONDS);
        assertEquals(1, files.opened.get());
        // a definition of an unknown type waits for its type
        String odd = store.putExternal(new DeviceDefinition("odd", "nosuch", args()));
        m.definitionChanged(odd).get(30, TimeUnit.SECONDS);
        quiet();
        assertEquals(DeviceState.WAITING_FOR_TARGET, m.info("odd").orElseThrow().state());
        assertEquals("target type 'nosuch'", statusOf("odd", "waiting_for"));
        store.removeKey(key);
        DeviceHandle h = m.open("ext", "nbd:e");
        // deleted while in use: kept
        m.definitionDeleted(key).get(30, TimeUnit.SECONDS);
        assertTrue(m.info("ext").isPresent());
        h.close();
        String key3 = store.putExternal(new DeviceDefinition("ext2", "tfile",
                args("path", dir.resolve("ext2.img").toString(), "size", "1M")));
        m.definitionChanged(key3).get(30, TimeUnit.SECONDS);
        quiet();
        store.removeKey(key3);
        m.definitionDeleted(key3).get(30, TimeUnit.SECONDS);
        assertTrue(m.info("ext2").isEmpty());
    }

    @Test
    void aChangedDefinitionFromOutsideReloadsTheDevice() throws Exception {
        disk("disk0", 4 * MIB);
        m.create("part0", "linear", args("device", "disk0", "length", "1M"));
        String key = m.devicesForTest().get("part0").storeKey;
        assertNotNull(key);
        store.save(new DeviceDefinition("part0", "linear", args("device", "disk0", "length", "2M")));
        m.definitionChanged(key).get(30, TimeUnit.SECONDS);
        assertEquals(2 * MIB, m.info("part0").orElseThrow().size());
    }

    // ---------------------------------------------------------------- hot update

    @Test
    void aUserSuspendedDeviceStaysSuspendedAcrossAFactoryUpdate() throws Exception {
        disk("disk0", MIB);
        m.suspend("disk0");
        m.removeFactory(fileEntry);
        assertEquals(DeviceState.WAITING_FOR_TARGET, m.info("disk0").orElseThrow().state());
        m.addFactory(TestTargets.entry(new FileFactory(), "tfile"));
        quiet();
        assertEquals(DeviceState.SUSPENDED, m.info("disk0").orElseThrow().state());
        m.resume("disk0");
        assertEquals(DeviceState.ACTIVE, m.info("disk0").orElseThrow().state());
    }

    @Test
    void stoppingDoesNotWaitForATargetThatWillNotReturn() throws Exception {
        m.settings(Settings.of(600, 30));
        disk("disk0", MIB);
        m.create("part0", "linear", args("device", "disk0"));
        DeviceHandle h = m.open("part0", "t");
        m.removeFactory(fileEntry);
        Future<?> waiting = pool.submit(() -> {
            h.read(0, ByteBuffer.allocate(512));
            return null;
        });
        GateTest.await(() -> m.devicesForTest().get("disk0").gate.waiting() == 1, "a request at the gate");
        Future<?> stopping = pool.submit(() -> m.stop());
        stopping.get(60, TimeUnit.SECONDS); // far below the 600 s gate deadline
        Exception e = assertThrows(Exception.class, () -> waiting.get(60, TimeUnit.SECONDS));
        assertTrue(e.getCause().getMessage().contains("the device manager stopped"), e.getCause().getMessage());
    }
}
