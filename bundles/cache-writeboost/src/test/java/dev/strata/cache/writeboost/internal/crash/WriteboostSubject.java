package dev.strata.cache.writeboost.internal.crash;

import dev.strata.api.BlockDevice;
import dev.strata.cache.writeboost.internal.io.Tunables;
import dev.strata.cache.writeboost.internal.io.WriteboostCache;
import dev.strata.testsupport.crash.CrashTestSubject;
import dev.strata.testsupport.crash.Workload;
import dev.strata.testsupport.target.ForwardingBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;

/** writeboost over a crashable backing device (1 MiB) and cache device (17 MiB, the minimum). */
final class WriteboostSubject implements CrashTestSubject {
    private final String name;
    private final Tunables tunables;

    WriteboostSubject(String name, Tunables tunables) {
        this.name = name;
        this.tunables = tunables;
    }

    /**
     * {@link #cached()} with read caching: small read misses are staged, and the read-cache
     * injector runs after every write, write-zeroes and discard and before every flush, so that
     * blocks staged by a read and changed by the next write reach the injector (which must drop
     * them), and injected clean blocks reach flush points and crashes.
     */
    static WriteboostSubject readCaching() {
        return new WriteboostSubject("writeboost-readcache", cached().tunables.with(Tunables.READ_CACHE_THRESHOLD, "8"));
    }

    /** {@link #bypassing()} with read caching (see {@link #readCaching()}). */
    static WriteboostSubject readCachingBypassing() {
        return new WriteboostSubject("writeboost-readcache-bypass",
                bypassing().tunables.with(Tunables.READ_CACHE_THRESHOLD, "8"));
    }

    /**
     * cache_mode=writethrough with read caching: full-block writes go to the backing device and
     * are staged as clean copies (the injector runs as in {@link #readCaching()}); sub-block
     * writes still merge in the log.
     */
    static WriteboostSubject writethrough() {
        return new WriteboostSubject("writeboost-writethrough",
                cached().tunables.with(Tunables.CACHE_MODE, "writethrough").with(Tunables.READ_CACHE_THRESHOLD, "8"));
    }

    /** cache_mode=passthrough: reads and full-block writes go to the backing device only. */
    static WriteboostSubject passthrough() {
        return new WriteboostSubject("writeboost-passthrough", cached().tunables.with(Tunables.CACHE_MODE, "passthrough"));
    }

    /** Everything through the log. */
    static WriteboostSubject cached() {
        return new WriteboostSubject("writeboost", Tunables.DEFAULTS.with(Tunables.BYPASS_THRESHOLD, "0")
                .with(Tunables.SEQUENTIAL_CUTOFF, "0").with(Tunables.IO_TIMEOUT, "20000"));
    }

    /** Writes of 8 KiB and more bypass the log (invalidating what it holds). */
    static WriteboostSubject bypassing() {
        return new WriteboostSubject("writeboost-bypass", Tunables.DEFAULTS.with(Tunables.BYPASS_THRESHOLD, "8k")
                .with(Tunables.SEQUENTIAL_CUTOFF, "32k").with(Tunables.IO_TIMEOUT, "20000"));
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public List<DeviceSpec> devices() {
        return List.of(new DeviceSpec("backing", 1 << 20, 4096), new DeviceSpec("cache", 17 << 20, 4096));
    }

    @Override
    public BlockDevice create(List<BlockDevice> devices) throws IOException {
        return open(devices);
    }

    @Override
    public BlockDevice reopen(List<BlockDevice> devices) throws IOException {
        return open(devices);
    }

    private BlockDevice open(List<BlockDevice> d) throws IOException {
        WriteboostCache wb = WriteboostCache.open(name, d.get(0), d.get(1), false, tunables,
                WriteboostCache.Options.defaults().manual(), null);
        return tunables.readCacheThreshold() > 0 || tunables.writethrough() ? new Injecting(wb) : wb;
    }

    /** Runs the read-cache injector around the target's writes (see {@link #readCaching()}). */
    static final class Injecting extends ForwardingBlockDevice {
        final WriteboostCache wb;

        Injecting(WriteboostCache wb) {
            super(wb);
            this.wb = wb;
        }

        @Override
        public void write(long offset, ByteBuffer src, int flags) throws IOException {
            super.write(offset, src, flags);
            wb.injectorRunOnce();
        }

        @Override
        public void writeZeroes(long offset, long length, int flags) throws IOException {
            super.writeZeroes(offset, length, flags);
            wb.injectorRunOnce();
        }

        @Override
        public void discard(long offset, long length) throws IOException {
            super.discard(offset, length);
            wb.injectorRunOnce();
        }

        @Override
        public void flush() throws IOException {
            wb.injectorRunOnce();
            super.flush();
        }

        @Override
        public void close() throws IOException {
            wb.close();
        }
    }

    /** Writeback of everything written so far, then a superblock record update. */
    @Override
    public void background(BlockDevice target) throws IOException {
        WriteboostCache wb = target instanceof Injecting i ? i.wb : (WriteboostCache) target;
        wb.injectorRunOnce();
        wb.message("writeback", "all");
        for (int i = 0; i < 3; i++) {
            wb.writebackRunOnce();
        }
        wb.updateRecord(Long.MIN_VALUE);
    }

    /**
     * Writes through the log keep the log property; a bypassed write (and every full-block write
     * in writethrough and passthrough) goes to the backing device
     * as it is and can be torn by a crash like any write to a disk, so with bypass only the
     * durability model holds.
     */
    @Override
    public boolean logStructured() {
        return !name.endsWith("bypass") && !tunables.writesToBacking();
    }

    @Override
    public Workload workload() {
        return Workload.DEFAULT;
    }
}
