package dev.strata.cache.readcache.internal.crash;

import dev.strata.api.BlockDevice;
import dev.strata.cache.readcache.internal.io.Opener;
import dev.strata.cache.readcache.internal.io.TestPolicies;
import dev.strata.cache.writeboost.internal.io.Tunables;
import dev.strata.cache.writeboost.internal.io.WriteboostCache;
import dev.strata.testsupport.crash.CrashTestSubject;
import dev.strata.testsupport.target.ForwardingBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;

/**
 * writeboost over readcache over a slow origin: writes land in writeboost's log and reach the
 * read cache by writeback (invalidating what it holds); reads that miss writeboost are promoted
 * by the read cache. Every write is read back once in two (promoting through the stack). With
 * {@code write_promote} the read cache keeps writeboost's writeback cached instead.
 */
final class StackSubject implements CrashTestSubject {
    private final boolean writePromote;

    StackSubject() {
        this(false);
    }

    StackSubject(boolean writePromote) {
        this.writePromote = writePromote;
    }

    @Override
    public String name() {
        return writePromote ? "writeboost-over-readcache-write-promote" : "writeboost-over-readcache";
    }

    @Override
    public List<DeviceSpec> devices() {
        return List.of(new DeviceSpec("origin", 1 << 20, 4096), new DeviceSpec("rcache", 8192 + 40 * 4096, 4096),
                new DeviceSpec("wbcache", 17 << 20, 4096));
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
        Opener.Options o = Opener.withWritePromote(
                Opener.withTunables(Opener.withPolicy(Opener.options(TestPolicies.all()), "lru"), 0, Map.of()), writePromote);
        BlockDevice rc = Opener.open("rc", d.get(0), d.get(1), o);
        try {
            WriteboostCache wb = WriteboostCache.open("wb", rc, d.get(2), false, Tunables.DEFAULTS.with(Tunables.BYPASS_THRESHOLD, "8k")
                    .with(Tunables.SEQUENTIAL_CUTOFF, "32k").with(Tunables.IO_TIMEOUT, "20000"),
                    WriteboostCache.Options.defaults().manual(), null);
            return new Stack(wb, rc);
        } catch (IOException | RuntimeException e) {
            rc.close();
            throw e;
        }
    }

    @Override
    public void background(BlockDevice target) throws IOException {
        WriteboostCache wb = ((Stack) target).wb;
        wb.message("writeback", "all");
        for (int i = 0; i < 3; i++) {
            wb.writebackRunOnce();
        }
        wb.updateRecord(Long.MIN_VALUE);
    }

    static final class Stack extends ForwardingBlockDevice {
        final WriteboostCache wb;
        final BlockDevice rc;
        private int n;

        Stack(WriteboostCache wb, BlockDevice rc) {
            super(wb);
            this.wb = wb;
            this.rc = rc;
        }

        @Override
        public void write(long offset, ByteBuffer src, int flags) throws IOException {
            int len = src.remaining();
            super.write(offset, src, flags);
            if ((n++ & 1) == 0) {
                wb.read(offset, ByteBuffer.allocate(len));
            }
        }

        @Override
        public void close() throws IOException {
            try {
                wb.close();
            } finally {
                rc.close();
            }
        }
    }
}
