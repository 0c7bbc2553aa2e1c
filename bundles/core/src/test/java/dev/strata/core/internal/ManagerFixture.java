package dev.strata.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

import dev.strata.api.DeviceInfo;
import dev.strata.api.InvalidArgumentException;
import dev.strata.core.internal.linear.LinearTargetFactory;

/** A manager over a {@link MemStore} with tfile, linear and tcache targets, for the safety tests. */
abstract class ManagerFixture {
    @TempDir
    Path dir;
    MemStore store;
    DeviceManagerImpl m;
    CacheTestTarget.Factory caches;
    final ExecutorService pool = Executors.newCachedThreadPool();

    @BeforeEach
    void start() {
        store = new MemStore();
        m = manager(Settings.of(60, 30));
    }

    DeviceManagerImpl manager(Settings settings) {
        DeviceManagerImpl x = new DeviceManagerImpl(store, settings);
        caches = new CacheTestTarget.Factory();
        x.addFactory(TestTargets.entry(new TestTargets.FileFactory(), "tfile"));
        x.addFactory(TestTargets.entry(new LinearTargetFactory(), "linear"));
        x.addFactory(TestTargets.entry(caches, "tcache"));
        return x;
    }

    /** A new manager over the same store, as after a restart. */
    void restart() {
        m.stop();
        m = manager(Settings.of(60, 30));
        m.loadStored();
    }

    @AfterEach
    void stop() throws InterruptedException {
        caches.statusRelease.countDown();
        m.stop();
        pool.shutdownNow();
        pool.awaitTermination(30, TimeUnit.SECONDS);
    }

    static Map<String, String> args(String... kv) {
        Map<String, String> a = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            a.put(kv[i], kv[i + 1]);
        }
        return a;
    }

    DeviceInfo disk(String name) throws IOException {
        return m.create(name, "tfile", args("path", dir.resolve(name + ".img").toString(), "size", "1M"));
    }

    /** disk0 (backing), cache0 (cache), wb0 = tcache over them. */
    void cacheStack() throws IOException {
        disk("disk0");
        disk("cache0");
        m.create("wb0", "tcache", args("backing", "disk0", "cache", "cache0"));
    }

    CacheTestTarget wb0() {
        return (CacheTestTarget) m.devicesForTest().get("wb0").target;
    }

    /** Runs {@code action}, expects a one-line refusal containing {@code part}, and that nothing changed. */
    String refused(Executable action, String part) {
        List<DeviceInfo> before = m.list();
        Map<String, DeviceDefinition> stored = store.snapshot();
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, action);
        if (!e.getMessage().contains(part)) {
            throw new AssertionError("expected '" + part + "' in: " + e.getMessage());
        }
        assertEquals(-1, e.getMessage().indexOf('\n'), "one line");
        assertEquals(before, m.list(), "devices unchanged");
        assertEquals(stored, store.snapshot(), "store unchanged");
        return e.getMessage();
    }
}
