package dev.strata.cache.readcache.internal.crash;

import dev.strata.api.BlockDevice;
import dev.strata.cache.readcache.internal.io.Opener;
import dev.strata.cache.readcache.internal.io.TestPolicies;
import dev.strata.testsupport.crash.CrashTestSubject;
import dev.strata.testsupport.crash.Workload;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;

/**
 * readcache over a crashable origin (the workload's 256 KiB) and a cache of 40 slots of 4 KiB,
 * so that promotions evict and writes overwrite cached blocks. {@code lru} admits every miss;
 * every write is followed by a read of the same range half of the time (see {@link Rereading}),
 * so written blocks get promoted before they are durable on the origin. With {@code write_promote}
 * every write keeps its blocks cached (VOLATILE until a flush records them).
 */
final class ReadcacheSubject implements CrashTestSubject {
    private final String name;
    private final String policy;
    private final boolean reread;
    private final boolean writePromote;
    /** The readahead tunable ("0": off). */
    private final String readahead;
    /** The cache's block size; the workload's I/O stays 4 KiB units, so larger blocks are filled whole from partial reads. */
    private final int blockSize;

    ReadcacheSubject(String name, String policy, boolean reread) {
        this(name, policy, reread, false);
    }

    ReadcacheSubject(String name, String policy, boolean reread, boolean writePromote) {
        this(name, policy, reread, writePromote, "0");
    }

    ReadcacheSubject(String name, String policy, boolean reread, boolean writePromote, String readahead) {
        this(name, policy, reread, writePromote, readahead, 4096);
    }

    /**
     * A cache of {@code blockSize} blocks: the fewest slots readcache formats ({@code MIN_SLOTS}, 16)
     * over an origin of 24 blocks, so that promotions still evict; a read or write of one to four
     * 4 KiB units covers part of a block, and a promotion fills the whole block from the origin
     * (parts of it possibly volatile there, or just overwritten).
     */
    static ReadcacheSubject largeBlocks(String name, String policy, int blockSize) {
        return new ReadcacheSubject(name, policy, true, false, "0", blockSize);
    }

    private ReadcacheSubject(String name, String policy, boolean reread, boolean writePromote, String readahead,
            int blockSize) {
        this.name = name;
        this.policy = policy;
        this.reread = reread;
        this.writePromote = writePromote;
        this.readahead = readahead;
        this.blockSize = blockSize;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public List<DeviceSpec> devices() {
        if (blockSize == 4096) {
            return List.of(new DeviceSpec("origin", 256 << 10, 4096), new DeviceSpec("cache", 8192 + 40 * 4096, 4096));
        }
        // 16 slots after the superblock and one metadata block, aligned to a block
        long cache = Math.max(blockSize, 8192) + 16L * blockSize;
        return List.of(new DeviceSpec("origin", workload().units() * 4096L, 4096), new DeviceSpec("cache", cache, 4096));
    }

    @Override
    public BlockDevice create(List<BlockDevice> d) throws IOException {
        return open(d);
    }

    @Override
    public BlockDevice reopen(List<BlockDevice> d) throws IOException {
        return open(d);
    }

    private BlockDevice open(List<BlockDevice> d) throws IOException {
        Opener.Options o = Opener.withPolicy(Opener.options(TestPolicies.all()), policy);
        o = Opener.withBlockSize(o, blockSize);
        o = Opener.withWritePromote(Opener.withTunables(o, 0, Map.of()), writePromote);
        o = Opener.withReadahead(o, readahead);
        BlockDevice rc = Opener.open(name, d.get(0), d.get(1), o);
        return reread ? new Rereading(rc) : rc;
    }

    @Override
    public Workload workload() {
        // larger blocks: an origin of 24 of them (16 cached), still in 4 KiB units
        return blockSize == 4096 ? Workload.DEFAULT : Workload.DEFAULT.withUnits(24 * blockSize / 4096, 4096);
    }

    /** Reads back every write's range right after it (promoting it while its data is volatile on the origin). */
    static final class Rereading extends dev.strata.testsupport.target.ForwardingBlockDevice {
        private final BlockDevice rc;
        private int n;

        Rereading(BlockDevice rc) {
            super(rc);
            this.rc = rc;
        }

        @Override
        public void write(long offset, ByteBuffer src, int flags) throws IOException {
            int len = src.remaining();
            super.write(offset, src, flags);
            if ((n++ & 1) == 0) {
                rc.read(offset, ByteBuffer.allocate(len));
            }
        }

        @Override
        public void close() throws IOException {
            rc.close();
        }
    }
}
