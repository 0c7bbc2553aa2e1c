package dev.strata.cache.writeboost.internal.io;

import dev.strata.api.DeviceTimeoutException;
import dev.strata.api.Requests;
import dev.strata.cache.writeboost.internal.format.Layout;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicReferenceArray;

/** The read path: hits from the buffers or the cache device, misses from the backing device, with as few I/Os as possible; stages misses for read caching. */
final class ReadPath {
    static final int SB = Layout.SEGMENT_BLOCKS;
    static final int BS = Layout.BLOCK;
    private final Parts parts;
    private final LogState log;
    private final Stats stats;

    ReadPath(Parts parts) {
        this.parts = parts;
        this.log = parts.log;
        this.stats = parts.stats;
    }


    // ------------------------------------------------------------------------------------------
    // read path

    /** Reads of up to this many blocks take their classification arrays from the pool. */
    static final int SCRATCH_BLOCKS = 256;

    /** A read's per-block classification (kind, location, generation, valid bits), reused across reads. */
    static final class Scratch {
        final byte[] kind;
        final int[] locs;
        final int[] gens;
        final int[] vbits;

        Scratch(int n) {
            kind = new byte[n];
            locs = new int[n];
            gens = new int[n];
            vbits = new int[n];
        }
    }

    /** Free scratch sets (lock-free: claimed and returned with CAS; nothing allocated per read once warm). */
    private final AtomicReferenceArray<Scratch> pool = new AtomicReferenceArray<>(16);

    private Scratch take(int n) {
        if (n <= SCRATCH_BLOCKS) {
            for (int i = 0; i < pool.length(); i++) {
                Scratch s = pool.get(i);
                if (s != null && pool.compareAndSet(i, s, null)) {
                    return s;
                }
            }
        }
        return new Scratch(Math.max(n, SCRATCH_BLOCKS));
    }

    private void give(Scratch s) {
        if (s.kind.length != SCRATCH_BLOCKS) {
            return; // a large read's own arrays
        }
        for (int i = 0; i < pool.length(); i++) {
            if (pool.get(i) == null && pool.compareAndSet(i, null, s)) {
                return;
            }
        }
    }

    static final byte MISS = 0;
    static final byte DEV = 1;
    static final byte DEVP = 2;
    static final byte BUF = 3;
    static final byte BUFP = 4;

    public void read(long offset, ByteBuffer dst) throws IOException {
        int len = dst.remaining();
        Requests.check(log.size, offset, len);
        log.checkFailure();
        if (len == 0) {
            return;
        }
        long t0 = log.clock.nanoTime();
        if (log.tunables().passthrough() && clean()) {
            // passthrough with nothing dirty: the backing device holds every block, and a clean
            // copy could only repeat it; a dirty block (a sub-block write merged in the log, or
            // one from before the switch) is served through the cache as usual
            int base = dst.position();
            log.backing.read(offset, dst.duplicate().limit(base + len));
            dst.position(base + len);
            stats.readsPassedThrough.increment();
            stats.busy.op();
            stats.readLatency.recordSince(t0);
            return;
        }
        long end = offset + len;
        long first = offset >>> Layout.BLOCK_SHIFT;
        int n = (int) (((end - 1) >>> Layout.BLOCK_SHIFT) - first + 1);
        Scratch sc = take(n);
        try {
            read(offset, dst, len, t0, end, first, n, sc.kind, sc.locs, sc.gens, sc.vbits);
        } finally {
            give(sc);
        }
    }

    private void read(long offset, ByteBuffer dst, int len, long t0, long end, long first, int n, byte[] kind,
            int[] locs, int[] gens, int[] vbits) throws IOException {
        byte[][] partials = null;
        int base = dst.position();
        Tunables rt = log.tunables();
        boolean stage = log.readCache.wants(offset, len, rt.readCacheThreshold(), rt.writeAround() || rt.passthrough());
        long snap = 0;
        for (int attempt = 0;; attempt++) {
            boolean anyDevice = false;
            boolean anyBacking = false;
            log.lock.lock();
            try {
                log.checkFailure();
                if (attempt == 0 && stage) {
                    // before any backing read: a write that lands after this stamp voids the staged copy
                    snap = log.readCache.snapshot();
                }
                for (int i = 0; i < n; i++) {
                    long b = first + i;
                    int s0 = i == 0 ? (int) ((offset & (BS - 1)) >>> 9) : 0;
                    int s1 = i == n - 1 ? (int) ((((end - 1) & (BS - 1)) >>> 9) + 1) : Layout.SECTORS_PER_BLOCK;
                    int need = ((1 << (s1 - s0)) - 1) << s0;
                    int loc = log.map.get(b);
                    if (loc < 0) {
                        kind[i] = MISS;
                        anyBacking = true;
                        continue;
                    }
                    int bits = log.map.valid(loc);
                    boolean full = (need & ~bits) == 0;
                    locs[i] = loc;
                    vbits[i] = bits;
                    if (log.inBuffer(loc)) {
                        log.awaitCopied(loc); // a writer may still be copying into the slot
                        ByteBuffer buf = log.bufferOf(loc);
                        if (full) {
                            kind[i] = BUF;
                            dst.put(base + dstIndex(b, s0, offset), buf, (loc % SB) * BS + (s0 << 9), (s1 - s0) << 9);
                        } else {
                            kind[i] = BUFP;
                            anyBacking = true;
                            if (partials == null) {
                                partials = new byte[n][];
                            }
                            byte[] p = partials[i] == null ? new byte[BS] : partials[i];
                            partials[i] = p;
                            buf.get((loc % SB) * BS, p, 0, BS);
                        }
                    } else {
                        kind[i] = full ? DEV : DEVP;
                        gens[i] = log.segGen[loc / SB];
                        anyDevice = true;
                        if (!full) {
                            anyBacking = true;
                        }
                    }
                }
            } finally {
                log.lock.unlock();
            }
            // backing runs: blocks that need the backing device at all
            if (anyBacking) {
                int i = 0;
                while (i < n) {
                    if (kind[i] == MISS || kind[i] == DEVP || kind[i] == BUFP) {
                        int j = i;
                        while (j + 1 < n && (kind[j + 1] == MISS || kind[j + 1] == DEVP || kind[j + 1] == BUFP)) {
                            j++;
                        }
                        long from = Math.max(offset, (first + i) << Layout.BLOCK_SHIFT);
                        long to = Math.min(end, (first + j + 1) << Layout.BLOCK_SHIFT);
                        stats.busy.begin();
                        try {
                            log.backing.read(from, dst.duplicate().position(base + (int) (from - offset))
                                    .limit(base + (int) (to - offset)));
                        } finally {
                            stats.busy.end();
                        }
                        i = j + 1;
                    } else {
                        i++;
                    }
                }
            }
            // cache device runs: consecutive locations
            ByteBuffer tmp = null;
            if (anyDevice) {
                int i = 0;
                while (i < n) {
                    if (kind[i] == DEV) {
                        int j = i;
                        while (j + 1 < n && kind[j + 1] == DEV && locs[j + 1] == locs[j] + 1
                                && locs[j + 1] / SB == locs[i] / SB) {
                            j++;
                        }
                        long from = Math.max(offset, (first + i) << Layout.BLOCK_SHIFT);
                        long to = Math.min(end, (first + j + 1) << Layout.BLOCK_SHIFT);
                        long devOff = log.locOffset(locs[i]) + (from - ((first + i) << Layout.BLOCK_SHIFT));
                        log.cache.read(devOff, dst.duplicate().position(base + (int) (from - offset))
                                .limit(base + (int) (to - offset)));
                        i = j + 1;
                    } else if (kind[i] == DEVP) {
                        if (tmp == null) {
                            tmp = ByteBuffer.allocate(BS);
                        }
                        tmp.clear();
                        log.cache.read(log.locOffset(locs[i]), tmp);
                        overlay(dst, base, offset, end, first + i, tmp, vbits[i]);
                        i++;
                    } else {
                        i++;
                    }
                }
            }
            if (partials != null) {
                for (int i = 0; i < n; i++) {
                    if (kind[i] == BUFP) {
                        overlay(dst, base, offset, end, first + i, ByteBuffer.wrap(partials[i]), vbits[i]);
                    }
                }
            }
            // validate: no location read from the device was reused meanwhile
            boolean ok = true;
            if (anyDevice) {
                log.lock.lock();
                try {
                    for (int i = 0; i < n && ok; i++) {
                        if ((kind[i] == DEV || kind[i] == DEVP) && log.segGen[locs[i] / SB] != gens[i]) {
                            ok = false;
                        }
                    }
                } finally {
                    log.lock.unlock();
                }
            }
            if (ok) {
                break;
            }
            if (attempt > 1000) {
                throw new DeviceTimeoutException(log.name, offset, "read kept racing with log reuse");
            }
        }
        if (stage) {
            stageMisses(kind, first, n, offset, end, dst, base, snap);
        }
        for (int i = 0; i < n; i++) {
            switch (kind[i]) {
                case DEV, BUF -> stats.readHits.increment();
                case MISS -> stats.readMisses.increment();
                default -> stats.readPartial.increment();
            }
        }
        dst.position(base + len);
        stats.busy.op();
        stats.readLatency.recordSince(t0);
    }

    /**
     * Read caching: stages the full blocks this read got from the backing device (kind MISS) for
     * the injector, with the stamp taken before the backing read.
     */
    void stageMisses(byte[] kind, long first, int n, long offset, long end, ByteBuffer dst, int base, long snap) {
        boolean any = false;
        log.lock.lock();
        try {
            if (log.failure != null || log.closed || log.suspended) {
                return;
            }
            for (int i = 0; i < n; i++) {
                long bOff = (first + i) << Layout.BLOCK_SHIFT;
                if (kind[i] == MISS && bOff >= offset && bOff + BS <= end) {
                    any |= log.readCache.stage(first + i, dst, base + (int) (bOff - offset), snap);
                }
            }
            if (any) {
                log.injectWake.signal();
            }
        } finally {
            log.lock.unlock();
        }
    }

    /** Whether no block is dirty now. */
    private boolean clean() throws IOException {
        log.lock.lock();
        try {
            log.checkFailure();
            return log.dirty == 0;
        } finally {
            log.lock.unlock();
        }
    }

    static int dstIndex(long block, int s0, long offset) {
        return (int) ((block << Layout.BLOCK_SHIFT) + (s0 << 9) - offset);
    }

    /** Copies the valid sectors of {@code block} (held in {@code src} from index 0) that the read covers. */
    static void overlay(ByteBuffer dst, int base, long offset, long end, long block, ByteBuffer src, int bits) {
        long bOff = block << Layout.BLOCK_SHIFT;
        for (int s = 0; s < Layout.SECTORS_PER_BLOCK; s++) {
            if ((bits & (1 << s)) == 0) {
                continue;
            }
            long so = bOff + (s << 9);
            if (so < offset || so + 512 > end) {
                continue;
            }
            dst.put(base + (int) (so - offset), src, s << 9, 512);
        }
    }
}
