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

    ReadcacheSubject(String name, String policy, boolean reread) {
        this(name, policy, reread, false);
    }

    ReadcacheSubject(String name, String policy, boolean reread, boolean writePromote) {
        this(name, policy, reread, writePromote, "0");
    }

    ReadcacheSubject(String name, String policy, boolean reread, boolean writePromote, String readahead) {
        this.name = name;
        this.policy = policy;
        this.reread = reread;
        this.writePromote = writePromote;
        this.readahead = readahead;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public List<DeviceSpec> devices() {
        return List.of(new DeviceSpec("origin", 256 << 10, 4096), new DeviceSpec("cache", 8192 + 40 * 4096, 4096));
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
        o = Opener.withWritePromote(Opener.withTunables(o, 0, Map.of()), writePromote);
        o = Opener.withReadahead(o, readahead);
        BlockDevice rc = Opener.open(name, d.get(0), d.get(1), o);
        return reread ? new Rereading(rc) : rc;
    }

    @Override
    public Workload workload() {
        return Workload.DEFAULT;
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
