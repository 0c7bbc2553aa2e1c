package dev.strata.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.strata.api.BlockDevice;
import dev.strata.api.Claim;
import dev.strata.api.DeviceHandle;
import dev.strata.api.DeviceInfo;
import dev.strata.testsupport.load.VerifiedIo;

/**
 * {@code DeviceManager.attach}: a cache put in front of a live device under its own name, with
 * verified I/O running through an open handle (an export) and through a device stacked on it;
 * refusals; a failure at each phase; a crash at each phase then a restart.
 */
class AttachTest extends ManagerFixture {

    /** disk0 (tfile, 1 MiB) exported as nbd:x and with vol0 (linear) stacked on it; cache0 free. */
    private DeviceHandle base() throws IOException {
        disk("disk0");
        disk("cache0");
        m.create("vol0", "linear", args("device", "disk0", "offset", "512K"));
        return m.open("disk0", "nbd:x");
    }

    private VerifiedIo io(DeviceHandle h) {
        BlockDevice vol0 = m.open("vol0", "nbd:y");
        // threads 0 and 2 on disk0 (its blocks 0-31, 64-95), 1 and 3 on vol0 (its blocks 32-63, 96-127,
        // which are disk0's past 512 KiB): nobody writes a block through both
        return new VerifiedIo(List.of(h, vol0), 4, 32);
    }

    @Test
    void attachUnderVerifiedIoKeepsNameIdentityHoldersAndData() throws Exception {
        DeviceHandle h = base();
        String id = m.info("disk0").orElseThrow().id();
        VerifiedIo io = new VerifiedIo(List.of(h), 4, 64).start(pool);
        io.awaitOps(500);
        DeviceInfo after = m.attach("disk0", "tcache", args("cache", "cache0"), null);
        io.awaitOps(500);
        io.stop();
        System.out.println("attach under I/O: " + io.summary() + ", gate closed "
                + m.status("disk0").get("last_swap_pause_us") + " µs");
        assertEquals(0, io.errors.get(), io.summary());
        assertEquals(0, io.mismatches.get(), io.summary());

        assertEquals("tcache", after.type());
        assertEquals(id, after.id(), "the device keeps its identity");
        assertEquals(List.of("disk0.tfile", "cache0"), after.lower());
        assertEquals(List.of("vol0", "nbd:x"), after.holders(), "vol0 and the export still hold disk0");
        DeviceInfo lower = m.info("disk0.tfile").orElseThrow();
        assertEquals("tfile", lower.type());
        assertNotEquals(id, lower.id());
        assertEquals(Map.of("disk0", Claim.EXCLUSIVE), lower.holderClaims());
        assertEquals(caches.last.backingId, lower.id(), "the cache knows its backing device's identity");
        assertEquals(0, io.verifyAll(h));
        assertTrue(store.snapshot().values().stream().allMatch(d -> d.stagedFor() == null), "no staged mark left");

        h.close();
        restart();
        assertEquals("tcache", m.info("disk0").orElseThrow().type());
        assertEquals(List.of("disk0.tfile", "cache0"), m.info("disk0").orElseThrow().lower());
        assertEquals("tfile", m.info("disk0.tfile").orElseThrow().type());
        try (DeviceHandle again = m.open("disk0", "nbd:x")) {
            assertEquals(0, io.verifyAll(again), "every block after a restart");
        }
    }

    @Test
    void anUnknownArgumentsAllowedListLeavesOutTheBackingKeyAttachRefuses() {
        // a trial: "allowed: backing, cache, …" sent the user to backing=, which attach refuses
        dev.strata.api.InvalidArgumentException e = new dev.strata.api.InvalidArgumentException(
                "writecache: unknown argument 'bogus'; allowed: backing, block_size, cache, format");
        assertEquals("writecache: unknown argument 'bogus'; allowed: block_size, cache, format",
                Attacher.withoutAllowed(e, "backing").getMessage());
        assertEquals("x: unknown argument 'y'; allowed: cache, origin; see docs",
                Attacher.withoutAllowed(new dev.strata.api.InvalidArgumentException(
                        "x: unknown argument 'y'; allowed: cache, origin, zz; see docs"), "zz").getMessage());
        dev.strata.api.InvalidArgumentException other = new dev.strata.api.InvalidArgumentException("cache0 is busy");
        assertEquals(other, Attacher.withoutAllowed(other, "backing"), "any other refusal is passed on as it is");
    }

    @Test
    void formatTrueIsForTheAttachsOwnBuildOnly() throws Exception {
        // kept, a later start would format a cache whose superblock got damaged, dirty blocks and all
        DeviceHandle h = base();
        m.attach("disk0", "tcache", args("cache", "cache0", "format", "true"), null);
        assertEquals(Map.of("backing", "disk0.tfile", "cache", "cache0"), m.info("disk0").orElseThrow().arguments());
        assertEquals(Map.of("backing", "disk0.tfile", "cache", "cache0"), store.snapshot().values().stream()
                .filter(d -> d.name().equals("disk0")).findFirst().orElseThrow().arguments(), "stored without it");
        h.close();
        restart();
        assertEquals(Map.of("backing", "disk0.tfile", "cache", "cache0"), m.info("disk0").orElseThrow().arguments());
        assertEquals("tcache", m.info("disk0").orElseThrow().type());
    }

    @Test
    void holdersAboveKeepWorkingAndStackedCachesBuildAStack() throws Exception {
        DeviceHandle h = base();
        VerifiedIo io = io(h).start(pool);
        io.awaitOps(300);
        m.attach("disk0", "tcache", args("cache", "cache0"), "slow");
        io.awaitOps(300);
        disk("cache1");
        m.attach("disk0", "tcache", args("cache", "cache1"), null); // a cache in front of a cache
        io.awaitOps(300);
        io.stop();
        System.out.println("two attaches under I/O through disk0 and vol0: " + io.summary());
        assertEquals(0, io.errors.get(), io.summary());
        assertEquals(0, io.mismatches.get(), io.summary());
        assertEquals(List.of("disk0.tcache", "cache1"), m.info("disk0").orElseThrow().lower());
        assertEquals(List.of("slow", "cache0"), m.info("disk0.tcache").orElseThrow().lower());
        assertEquals(List.of("disk0.tcache"), m.info("slow").orElseThrow().holders());
        assertTrue(m.info("disk0").orElseThrow().holders().containsAll(List.of("vol0", "nbd:x")));
    }

    @Test
    void badInputIsOneLineAndChangesNothing() throws Exception {
        base();
        disk("cache1");
        m.create("peek", "linear", args("device", "cache1"));
        refused(() -> m.attach("nope", "tcache", args("cache", "cache0"), null), "no device named 'nope'");
        refused(() -> m.attach("disk0", "nope", args("cache", "cache0"), null), "unknown target type 'nope'");
        refused(() -> m.attach("disk0", "tfile", args("path", "x"), null), "cannot be attached");
        refused(() -> m.attach("disk0", "tcache", args("cache", "cache0", "backing", "x"), null), "leave out backing=");
        refused(() -> m.attach("disk0", "tcache", args(), null), "tcache");
        refused(() -> m.attach("disk0", "tcache", args("cache", "ghost"), null), "no device named 'ghost'");
        refused(() -> m.attach("disk0", "tcache", args("cache", "disk0"), null), "cannot be stacked on itself");
        refused(() -> m.attach("disk0", "tcache", args("cache", "vol0"), null), "stacked on 'disk0'");
        refused(() -> m.attach("disk0", "tcache", args("cache", "cache1"), null), "cache1 is in use by peek");
        refused(() -> m.attach("disk0", "tcache", args("cache", "cache0"), "cache1"), "'cache1' already exists");
        refused(() -> m.attach("disk0", "tcache", args("cache", "cache0"), "-x"), "invalid device name '-x'");
        refused(() -> m.attach("vol0", "tcache", args("cache", "disk0"), null), "already under vol0");
        m.suspend("disk0");
        refused(() -> m.attach("disk0", "tcache", args("cache", "cache0"), null), "is suspended");
        m.resume("disk0");
    }

    @ParameterizedTest
    @ValueSource(strings = {"staged", "built"})
    void aFailureBeforeTheCommitChangesNothing(String phase) throws Exception {
        DeviceHandle h = base();
        VerifiedIo io = io(h).start(pool);
        io.awaitOps(200);
        List<DeviceInfo> before = m.list();
        Map<String, DeviceDefinition> stored = store.snapshot();
        m.core().attacher.hook = p -> {
            if (p.equals(phase)) {
                throw new IOException("failure at " + p + " (test)");
            }
        };
        IOException e = assertThrows(IOException.class, () -> m.attach("disk0", "tcache", args("cache", "cache0"), null));
        assertTrue(e.getMessage().contains("failure at " + phase), e.getMessage());
        io.awaitOps(200);
        io.stop();
        assertEquals(0, io.errors.get(), io.summary());
        assertEquals(0, io.mismatches.get(), io.summary());
        assertEquals(before, m.list(), "devices as before");
        assertEquals(stored, store.snapshot(), "store as before");
        if (phase.equals("built")) {
            assertTrue(caches.last.closed, "the new target was closed");
        }
        m.core().attacher.hook = p -> { };
        m.attach("disk0", "tcache", args("cache", "cache0"), null); // and it works afterwards
        try (DeviceHandle vol0 = m.open("vol0", "nbd:z")) {
            assertEquals(0, io.verifyAll(new Halves(h, vol0)));
        }
    }

    @Test
    void aBuildThatFailsChangesNothing() throws Exception {
        base();
        disk("cache1");
        refused(() -> m.attach("disk0", "linear", args("offset", "2M"), null), "past the end");
    }

    /** A crash (the process dies) at each phase: the store as it was then, a restart, the disk rule. */
    @ParameterizedTest
    @ValueSource(strings = {"staged", "built", "committed", "done"})
    void aCrashAtEachPhaseRestartsConsistent(String phase) throws Exception {
        DeviceHandle h = base();
        VerifiedIo io = io(h).start(pool);
        io.awaitOps(200);
        AtomicReference<Map<String, DeviceDefinition>> atCrash = new AtomicReference<>();
        m.core().attacher.hook = p -> {
            if (p.equals(phase)) {
                atCrash.set(store.snapshot());
            }
        };
        m.attach("disk0", "tcache", args("cache", "cache0"), null);
        if (phase.equals("done")) {
            atCrash.set(store.snapshot());
        }
        io.awaitOps(200);
        io.stop();
        h.close();
        m.stop();
        boolean committed = phase.equals("committed") || phase.equals("done");
        store = new MemStore(atCrash.get());
        m = manager(Settings.of(60, 30));
        m.loadStored();
        DeviceInfo disk0 = m.info("disk0").orElseThrow();
        assertEquals(dev.strata.api.DeviceState.ACTIVE, disk0.state(), disk0.toString());
        assertEquals(committed ? "tcache" : "tfile", disk0.type());
        assertEquals(committed, m.info("disk0.tfile").isPresent());
        assertTrue(store.snapshot().values().stream().allMatch(d -> d.stagedFor() == null), "marks resolved");
        assertEquals(committed ? 4 : 3, store.snapshot().size(), store.snapshot().toString());
        try (DeviceHandle again = m.open("disk0", "nbd:x"); DeviceHandle vol0 = m.open("vol0", "nbd:y")) {
            // every acknowledged write is in the files: all blocks hold their last stamp
            assertEquals(0, io.verifyAll(new Halves(again, vol0)), "disk rule after a crash at " + phase);
        }
        if (!committed) {
            m.attach("disk0", "tcache", args("cache", "cache0"), null); // the attach can simply be run again
        }
    }

    @Test
    void aStagedDefinitionArrivingFromTheStoreIsNotBuilt() throws Exception {
        base();
        DeviceDefinition staged = new DeviceDefinition("ghost", "tfile",
                args("path", dir.resolve("g.img").toString(), "size", "1M")).staged("disk0");
        String key = store.putExternal(staged);
        m.definitionChanged(key).get();
        assertFalse(m.info("ghost").isPresent());
        restart(); // disk0 never named it: rolled back
        assertFalse(m.info("ghost").isPresent());
        assertNull(store.snapshot().get(key));
    }

    /** Threads 0,1 wrote disk0's first blocks through the export, 2,3 vol0's (which start at disk0's 512 KiB). */
    private static final class Halves extends dev.strata.testsupport.target.ForwardingBlockDevice {
        private final BlockDevice vol0;

        Halves(BlockDevice disk0, BlockDevice vol0) {
            super(disk0);
            this.vol0 = vol0;
        }

        @Override
        public void read(long offset, java.nio.ByteBuffer dst) throws IOException {
            // VerifiedIo's threads 0 and 2 use devices[0], 1 and 3 devices[1]: blocks of odd threads are on vol0
            long block = offset / VerifiedIo.BLOCK;
            if ((block / 32) % 2 == 1) {
                vol0.read(offset, dst);
            } else {
                super.read(offset, dst);
            }
        }
    }
}
