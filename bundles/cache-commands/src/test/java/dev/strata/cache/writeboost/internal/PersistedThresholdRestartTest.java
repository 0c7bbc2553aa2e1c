package dev.strata.cache.writeboost.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.strata.api.DeviceHandle;
import dev.strata.api.Target;
import dev.strata.api.TargetArguments;
import dev.strata.api.TargetContext;
import dev.strata.api.TargetFactory;
import dev.strata.api.WritebackController;
import dev.strata.core.internal.DefinitionStore;
import dev.strata.core.internal.DeviceDefinition;
import dev.strata.core.internal.DeviceManagerImpl;
import dev.strata.core.internal.FactoryEntry;
import dev.strata.core.internal.Settings;
import dev.strata.testsupport.crash.CrashableDevice;
import dev.strata.testsupport.target.ForwardingBlockDevice;

/**
 * A writeboost cache with {@code writeback_threshold 0} persisted ({@code cache:set wb0
 * writeback_threshold 0}) writes nothing back across restarts: the real device manager (in
 * process) and the real writeboost factory, the backing device counting every write.
 *
 * <p>What was seen: the dirty count fell 8,192 → 4,928 → 64 over restarts, because the manager
 * re-applied the persisted tunable by a message after the build, while the writeback daemon,
 * started inside {@code create}, had already decided at the default threshold (70). Here the
 * daemon's first decision is forced to happen before {@code create} returns (the wrapping
 * factory waits for it), so a tunable applied after the build would always come too late; the
 * writeback controller in use ({@code modulator}, a probe) grants a full batch whenever the
 * threshold is above 0.
 */
class PersistedThresholdRestartTest {
    static final int BS = 4096;
    static final int DIRTY = 8192;

    final Map<String, CrashableDevice> disks = new ConcurrentHashMap<>();
    final AtomicLong backingWrites = new AtomicLong();
    final Map<String, DeviceDefinition> stored = new ConcurrentHashMap<>();
    final DefinitionStore store = new DefinitionStore() {
        @Override
        public List<String> keys() {
            return List.copyOf(stored.keySet());
        }

        @Override
        public String save(DeviceDefinition def) {
            stored.put(def.name(), def);
            return def.name();
        }

        @Override
        public void delete(String name) {
            stored.remove(name);
        }

        @Override
        public java.util.Optional<DeviceDefinition> load(String key) {
            return java.util.Optional.ofNullable(stored.get(key));
        }
    };
    final Probe probe = new Probe();
    /** The arguments each writeboost target was built with. */
    final List<Map<String, String>> builtWith = new CopyOnWriteArrayList<>();
    /** Whether create waits for the writeback daemon's first decision (a reopened dirty cache). */
    volatile boolean awaitFirstDecision;
    DeviceManagerImpl m;

    void start() {
        m = new DeviceManagerImpl(store, Settings.of(60, 30));
        m.addFactory(new FactoryEntry("mem", new MemFactory(), "test", "0", 0, 1));
        m.addFactory(new FactoryEntry("writeboost", new Waiting(), "test", "0", 0, 2));
        m.loadStored();
    }

    @AfterEach
    void stop() {
        if (m != null) {
            m.stop();
        }
    }

    @Test
    void aPersistedThresholdOfZeroWritesNothingBackAcrossRestarts() throws Exception {
        disks.put("slow", new CrashableDevice("slow", 64L << 20, BS));
        disks.put("fast", new CrashableDevice("fast", 64L << 20, BS));
        start();
        m.create("slow", "mem", Map.of("name", "slow"));
        m.create("fast", "mem", Map.of("name", "fast"));
        m.create("wb0", "writeboost", Map.of("backing", "slow", "cache", "fast", "sequential_cutoff", "0"));
        m.message("wb0", "writeback_threshold", "0", true);
        try (DeviceHandle h = m.open("wb0", "test")) {
            ByteBuffer b = ByteBuffer.allocateDirect(BS);
            for (int i = 0; i < DIRTY; i++) {
                b.clear();
                b.putInt(0, i);
                h.write((long) i * BS, b, 0);
            }
            h.flush();
        }
        assertEquals(DIRTY, dirty());
        long before = backingWrites.get();
        for (int restart = 1; restart <= 3; restart++) {
            m.stop();
            probe.decisions.set(0);
            probe.thresholds.clear();
            awaitFirstDecision = true;
            start();
            // a second decision: the first one's batch, had it been granted, is complete
            await(() -> probe.decisions.get() >= 2, "a second writeback decision after restart " + restart);
            assertEquals(DIRTY, dirty(), "dirty blocks after restart " + restart);
            assertEquals(before, backingWrites.get(), "backing writes after restart " + restart);
            assertEquals("0", probe.thresholds.get(0), "the first writeback decision after restart " + restart);
            assertEquals("0", builtWith.get(builtWith.size() - 1).get("writeback_threshold"),
                    "the persisted threshold is among the build's arguments");
        }
        // the cache still writes back on request
        m.message("wb0", "writeback", "all", false);
        await(() -> {
            try {
                return dirty() == 0;
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        }, "writeback=all");
        assertTrue(backingWrites.get() > before);
    }

    long dirty() throws IOException {
        return Long.parseLong(m.status("wb0").get("dirty_blocks"));
    }

    static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("timed out waiting for " + what);
            }
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000L); // polls the condition; no timed assertion
        }
    }

    /** The writeboost factory, recording the arguments and (when asked) holding create until the first decision. */
    final class Waiting implements TargetFactory {
        final WriteboostFactory real = new WriteboostFactory();

        Waiting() {
            real.addController(probe, Map.of(WritebackController.NAME, "modulator"));
        }

        @Override
        public String usage() {
            return real.usage();
        }

        @Override
        public List<String> lowerDevices(Map<String, String> arguments) {
            return real.lowerDevices(arguments);
        }

        @Override
        public Map<String, dev.strata.api.Claim> claims(Map<String, String> arguments) {
            return real.claims(arguments);
        }

        @Override
        public boolean buildsWithTunable(String key) {
            return real.buildsWithTunable(key);
        }

        @Override
        public Target create(TargetContext context) throws IOException {
            builtWith.add(Map.copyOf(context.arguments()));
            Target t = real.create(context);
            if (awaitFirstDecision) {
                try {
                    await(() -> probe.decisions.get() >= 1, "the writeback daemon's first decision");
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted");
                }
            }
            return t;
        }
    }

    /** Grants a full batch whenever the threshold is above 0 (the busy meter does not matter here). */
    static final class Probe implements WritebackController {
        final AtomicInteger decisions = new AtomicInteger();
        final List<String> thresholds = new CopyOnWriteArrayList<>();

        @Override
        public Session open(String cache, Map<String, String> tunables) {
            return new Session() {
                volatile String threshold = tunables.getOrDefault("writeback_threshold", "70");

                @Override
                public Decision decide(CacheLoad load) {
                    thresholds.add(threshold);
                    decisions.incrementAndGet();
                    return "0".equals(threshold) || load.dirtyBlocks() == 0 ? Decision.waitFor(10_000_000L)
                            : Decision.fullSpeed(load.maxBatch());
                }

                @Override
                public boolean set(String key, String value) {
                    if ("writeback_threshold".equals(key)) {
                        threshold = value;
                        return true;
                    }
                    return false;
                }

                @Override
                public Map<String, String> status() {
                    return Map.of("writeback_threshold", threshold);
                }
            };
        }
    }

    /** {@code mem name=NAME}: the RAM disk of that name; the backing disk's writes are counted. */
    final class MemFactory implements TargetFactory {
        @Override
        public String usage() {
            return "mem name=NAME";
        }

        @Override
        public List<String> lowerDevices(Map<String, String> arguments) {
            TargetArguments.of("mem", arguments, Set.of("name"));
            return List.of();
        }

        @Override
        public Target create(TargetContext context) {
            String name = TargetArguments.of("mem", context.arguments(), Set.of("name")).string("name");
            boolean counted = name.equals("slow");
            return new Mem(disks.get(name), counted);
        }
    }

    final class Mem extends ForwardingBlockDevice implements Target {
        private final boolean counted;

        Mem(CrashableDevice d, boolean counted) {
            super(d);
            this.counted = counted;
        }

        @Override
        public void write(long offset, ByteBuffer src, int flags) throws IOException {
            if (counted) {
                backingWrites.incrementAndGet();
            }
            super.write(offset, src, flags);
        }

        @Override
        public void writeZeroes(long offset, long length, int flags) throws IOException {
            if (counted) {
                backingWrites.incrementAndGet();
            }
            super.writeZeroes(offset, length, flags);
        }

        @Override
        public String type() {
            return "mem";
        }

        @Override
        public Map<String, String> status() {
            return Map.of();
        }
    }
}
