package dev.strata.cache.writecache.internal.io;

import dev.strata.api.BlockDevice;
import dev.strata.cache.writecache.internal.format.Layout;
import dev.strata.cache.writecache.internal.recovery.Recovery;
import dev.strata.testsupport.crash.CrashTestSubject;
import dev.strata.testsupport.crash.Workload;
import java.io.IOException;
import java.util.List;

/**
 * writecache over a crashable backing device (1 MiB) and a cache device of {@code slots} slots,
 * with no background thread (the crash op "background" writes back the 8 oldest blocks) and FUA
 * data writes that start only when the commit waits for them (the most adversarial schedule the
 * design allows).
 */
public final class WritecacheSubject implements CrashTestSubject {
    private final String name;
    private final int slots;
    private final int blockSize;
    private final Options options;
    private final Tunables tunables;

    private WritecacheSubject(String name, int slots, int blockSize, Options options, Tunables tunables) {
        this.name = name;
        this.slots = slots;
        this.blockSize = blockSize;
        this.options = options;
        this.tunables = tunables;
    }

    /** 96 slots of 4 KiB: most of the 64-block workload fits. */
    public static WritecacheSubject roomy() {
        return new WritecacheSubject("writecache", 96, 4096, Options.defaults().manual().withLazyFuaData(),
                Tunables.DEFAULTS);
    }

    /** 12 slots: the cache is full most of the time (write-around, blocked writers, forwarded flushes). */
    public static WritecacheSubject small() {
        return new WritecacheSubject("writecache-small", 12, 4096, Options.defaults().manual().withLazyFuaData(),
                Tunables.DEFAULTS);
    }

    /** 512-byte blocks: a 4 KiB unit is eight slots. */
    public static WritecacheSubject sectors() {
        return new WritecacheSubject("writecache-512", 300, 512, Options.defaults().manual().withLazyFuaData(),
                Tunables.DEFAULTS);
    }

    /** Write-around mode (cleaner): whole blocks go to the backing device, cached copies are dropped. */
    public static WritecacheSubject cleaner() {
        return new WritecacheSubject("writecache-cleaner", 96, 4096, Options.defaults().manual().withLazyFuaData(),
                Tunables.DEFAULTS.with(Tunables.CLEANER, "true"));
    }

    /** {@link #roomy()} with the pre-2020 commit order (flush before the data wait): must lose data. */
    public static WritecacheSubject pre2020() {
        return new WritecacheSubject("writecache-pre2020-order", 96, 4096,
                Options.defaults().manual().withLazyFuaData().pre2020CommitOrder(), Tunables.DEFAULTS);
    }

    /** Cache device bytes for {@code slots} slots of {@code bs}. */
    public static long cacheBytes(int slots, int bs) {
        return Layout.dataOffset(bs, slots) + (long) slots * bs;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public List<DeviceSpec> devices() {
        return List.of(new DeviceSpec("backing", 1 << 20, blockSize), new DeviceSpec("cache", cacheBytes(slots, blockSize),
                blockSize));
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
        return Recovery.open(name, d.get(0), d.get(1), "backing-id", blockSize, false, tunables, options);
    }

    /**
     * After every crash: the superblock (unless a format was cut short) and every metadata
     * sector still validate (neither can be torn), whatever the crash mode.
     */
    @Override
    public void checkOffline(List<BlockDevice> devices) throws IOException {
        BlockDevice cache = devices.get(1);
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(Layout.SUPERBLOCK_BYTES);
        cache.read(0, b);
        dev.strata.cache.writecache.internal.format.Superblock sb;
        try {
            sb = dev.strata.cache.writecache.internal.format.Superblock.decode(b.clear());
            Layout l = sb.layout();
            java.nio.ByteBuffer m = java.nio.ByteBuffer.allocate((int) l.metadataSectors() * Layout.SECTOR);
            cache.read(Layout.METADATA_OFFSET, m);
            for (int i = 0; i < l.metadataSectors(); i++) {
                dev.strata.cache.writecache.internal.format.MetadataSector.check(m, i * Layout.SECTOR, i, l.slots(),
                        devices.get(0).size() / blockSize);
            }
        } catch (dev.strata.cache.writecache.internal.format.FormatException e) {
            if (e.kind() == dev.strata.cache.writecache.internal.format.FormatException.Kind.BLANK) {
                return; // a crash inside the first format: the next open formats again
            }
            throw new AssertionError(e.getMessage(), e);
        }
    }

    @Override
    public void background(BlockDevice target) throws IOException {
        ((WritecacheTarget) target).writebackOldest(8);
    }

    @Override
    public Workload workload() {
        return Workload.DEFAULT;
    }
}
