package dev.strata.cache.commands.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

import dev.strata.api.CacheTarget;
import dev.strata.api.DeviceHandle;
import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceState;
import dev.strata.testsupport.load.VerifiedIo;

/**
 * What the {@code cache:replace} tests share: the real manager with crashable disks {@code slow},
 * {@code ssd} and {@code ssd2}, a cache attached to {@code slow} on {@code ssd}, its dirty blocks
 * written and checked, and what each disk holds.
 */
abstract class ReplaceFixture {
    static final long MIB = 1L << 20;
    static final int DIRTY = 600;
    LiveStack s;
    String type;
    final ExecutorService pool = Executors.newCachedThreadPool();

    @BeforeEach
    void start() throws Exception {
        s = new LiveStack();
        s.disk("slow", 8 * MIB);
        s.disk("ssd", 24 * MIB);
        s.disk("ssd2", 32 * MIB);
    }

    /** The cache under test on {@code slow}, on {@code ssd}. */
    void attach(String policy) throws Exception {
        type = policy;
        // writeback_threshold=0: the dirty data stays in the cache (no writeback while the test runs);
        // a writecache below its high watermark (50%) writes nothing back either
        s.run("cache:attach slow " + policy + " cache=ssd" + (policy.equals("writeboost") ? " writeback_threshold=0" : ""));
    }

    @AfterEach
    void stop() throws InterruptedException {
        s.gates.values().forEach(GatedDevice::open);
        s.close();
        pool.shutdownNow();
        pool.awaitTermination(30, TimeUnit.SECONDS);
    }

    void writeDirty(int stamp) throws Exception {
        try (DeviceHandle h = s.manager.open("slow", "test")) {
            ByteBuffer b = ByteBuffer.allocate(VerifiedIo.BLOCK);
            for (int i = 0; i < DIRTY; i++) {
                long block = 256 + i * 37L % 1792; // scattered (a sequential stream bypasses), above VerifiedIo's blocks
                VerifiedIo.fill(b.clear(), block, stamp);
                h.write(block * VerifiedIo.BLOCK, b, 0);
            }
            h.flush();
        }
    }

    void checkDirty(int stamp) throws Exception {
        try (DeviceHandle h = s.manager.open("slow", "test")) {
            ByteBuffer b = ByteBuffer.allocate(VerifiedIo.BLOCK);
            for (int i = 0; i < DIRTY; i++) {
                long block = 256 + i * 37L % 1792;
                h.read(block * VerifiedIo.BLOCK, b.clear());
                assertEquals(stamp, VerifiedIo.stampOf(b.flip(), block), "block " + block);
            }
        }
    }

    long dirty() throws Exception {
        return s.manager.withTarget("slow", CacheTarget.class, CacheTarget::dirtyBlocks);
    }

    long cached() throws Exception {
        return s.manager.withTarget("slow", CacheTarget.class, CacheTarget::cachedBlocks);
    }

    long writes(String disk) {
        String st = s.disks.get(disk).stats(); // "NAME: writes N, fua …" (zeroes and discards included)
        return Long.parseLong(st.replaceAll(".*: writes (\\d+),.*", "$1"));
    }

    /** Whether the disk's first block is all zero (every policy then reads it as blank). */
    boolean blank(String disk) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(4096);
        s.disks.get(disk).read(0, b);
        for (int i = 0; i < 4096; i++) {
            if (b.get(i) != 0) {
                return false;
            }
        }
        return true;
    }

    void checkOn(String cache) {
        DeviceInfo slow = s.manager.info("slow").orElseThrow();
        assertEquals(type, slow.type());
        assertEquals(DeviceState.ACTIVE, slow.state(), slow.toString());
        assertEquals(cache, slow.arguments().get("cache"), slow.toString());
        assertEquals(List.of("slow.crash", cache), slow.lower());
        String other = cache.equals("ssd") ? "ssd2" : "ssd";
        assertTrue(s.manager.info(other).orElseThrow().holders().isEmpty(), other + " is free");
        assertTrue(s.store.snapshot().values().stream().noneMatch(d -> d.type().equals("cache-replace")),
                "no journal left: " + s.store.snapshot());
    }

    String error(String line) {
        return s.error(line);
    }

    String other(String line) throws Exception {
        return s.elsewhere(pool, line);
    }

    String other2(String line) {
        try {
            return other(line);
        } catch (Exception e) {
            return "failed: " + e;
        }
    }

    static Exception failure(Future<Object> f) throws Exception {
        return LiveStack.failure(f);
    }
}
