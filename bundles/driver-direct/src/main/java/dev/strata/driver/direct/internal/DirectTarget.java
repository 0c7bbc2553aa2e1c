package dev.strata.driver.direct.internal;

import com.sun.nio.file.ExtendedOpenOption;
import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceIOException;
import dev.strata.api.FastZeroUnsupportedException;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Requests;
import dev.strata.driver.support.internal.FileBackedTarget;
import dev.strata.driver.support.internal.FileSpec;
import dev.strata.driver.support.internal.ImageClaims;
import dev.strata.driver.support.internal.ReopeningChannel;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.StampedLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code direct} target: a regular file through O_DIRECT
 * ({@link ExtendedOpenOption#DIRECT}), bypassing the page cache.
 *
 * <p>Java demands that the position, the length <em>and</em> the buffer address of every O_DIRECT
 * transfer be multiples of the file system's block size ({@link #align}, 4096 on ext4), stricter
 * than the kernel's 512. Requests that meet this, from a suitably aligned direct buffer, go
 * straight to the file. All others go through aligned bounce buffers from a bounded pool, in
 * windows of at most {@value #LARGE} bytes (so large requests stay large). A window whose first
 * or last block is only partly covered by the request (offset or end aligned to 512 but not to
 * {@link #align}) is read-modify-written: the partial blocks are read, the request's bytes copied
 * over them, the whole window written. Unaligned requests are never refused.
 *
 * <h2>Locking rules</h2>
 * A read-modify-write must not race with another write to the same block, or it would write back
 * stale copies of sectors it does not own. The file is cut into {@value #GRANULE}-byte granules,
 * each mapped to one of {@value #STRIPES} {@link StampedLock}s (granule index modulo the stripe
 * count). A write holds, for the window it is writing: the <em>write</em> lock of the granules
 * holding a partial (read-modify-written) block, and the <em>read</em> lock of the other granules,
 * so fully aligned writes run in parallel with each other and exclude only read-modify-writes
 * that touch their granules. Locks of a window are taken in ascending stripe order, released
 * before the next window, and only after the window's buffer has been taken from the pool
 * (never wait for a buffer while holding a lock). Reads take no lock: a block being
 * read-modify-written holds, in every sector, either the old or the new data.
 *
 * <p>{@code flush} = {@code force(false)} (fdatasync: the disk's volatile cache and the file's
 * allocation metadata); a FUA write is the write followed by {@code force(false)}.
 */
final class DirectTarget extends FileBackedTarget {
    private static final Logger LOG = LoggerFactory.getLogger(DirectTarget.class);
    static final String TYPE = "direct";
    /** Largest bounce window. */
    static final int LARGE = 1 << 20;
    /**
     * Largest zero-copy piece: large I/O stays large (a writeboost flusher's multi-MiB log write is
     * one system call), bounded so that a piece's granules never share a lock stripe.
     */
    static final int ZERO_COPY_PIECE = 32 << 20;
    /** Bounce buffers for requests whose window fits here (most small random I/O). */
    static final int SMALL = 64 << 10;
    static final int GRANULE_SHIFT = 16;
    static final int GRANULE = 1 << GRANULE_SHIFT;
    private static final int STRIPES = 1024;

    static {
        assert ZERO_COPY_PIECE / GRANULE <= STRIPES : "a zero-copy piece would lock a stripe twice";
    }
    private static final byte[] ZERO_BYTES = new byte[SMALL];

    /** The O_DIRECT alignment: the file system block size, a power of two. */
    private final int align;
    private final BufferPool smallPool;
    private final BufferPool largePool;
    private volatile ByteBuffer zeroes; // aligned, LARGE bytes, never written after creation
    private final Lock[] sharedLocks = new Lock[STRIPES];
    private final Lock[] exclusiveLocks = new Lock[STRIPES];

    private final LongAdder bounced = new LongAdder();
    private final LongAdder readModifyWrites = new LongAdder();

    private DirectTarget(Path path, long size, int align, FileChannel channel, ImageClaims.Claim claim) {
        super(path, size, new ReopeningChannel(path, channel, DirectTarget::openChannel, LOG), claim);
        this.align = align;
        int cpus = Runtime.getRuntime().availableProcessors();
        this.smallPool = new BufferPool(name, Math.max(SMALL, align), align, 64);
        this.largePool = new BufferPool(name, Math.max(LARGE, align), align, Math.min(16, Math.max(4, 2 * cpus)));
        for (int i = 0; i < STRIPES; i++) {
            StampedLock l = new StampedLock();
            sharedLocks[i] = l.asReadLock();
            exclusiveLocks[i] = l.asWriteLock();
        }
    }

    /** Checks the spec and the file system, creates or grows the file if asked, opens it with O_DIRECT. */
    static DirectTarget open(FileSpec spec, String device) throws IOException {
        return open(spec, device, FileSpec.Progress.NONE);
    }

    /** As {@link #open(FileSpec, String)}; a preallocation reports to {@code progress}. */
    static DirectTarget open(FileSpec spec, String device, FileSpec.Progress progress) throws IOException {
        if (!DirectIo.available()) {
            throw new InvalidArgumentException(DirectIo.UNAVAILABLE); // before the file is created or grown
        }
        FileSpec.Plan plan = spec.check();
        int align = alignment(spec.path);
        if (plan.size % align != 0) {
            throw new InvalidArgumentException(TYPE + ": " + (plan.createFile || plan.growFile || spec.requestedSize >= 0
                    ? "size=" + plan.size : spec.path + " is " + plan.size + " bytes, which")
                    + " is not a multiple of the file system block size " + align
                    + " that O_DIRECT needs; use a multiple of " + align + " or the file target");
        }
        ImageClaims.Claim claim = spec.prepareClaimed(plan, device, progress); // refused before anything is grown
        FileChannel ch = null;
        try {
            try {
                ch = openChannel(spec.path);
            } catch (IOException e) {
                if (plan.createFile) {
                    Files.deleteIfExists(spec.path);
                }
                if (e.getMessage() != null && e.getMessage().contains("Invalid argument")) {
                    throw new InvalidArgumentException(TYPE + ": the file system of " + spec.path
                            + " does not support O_DIRECT; use the file target");
                }
                throw new DeviceIOException(spec.path.toString(), 0, "cannot open with O_DIRECT: " + e, e);
            }
            return new DirectTarget(spec.path, plan.size, align, ch, claim);
        } catch (Throwable e) {
            // also a NoClassDefFoundError when this bundle is refreshed during the build: the
            // claim must not outlive a target that never came to be, or the rebuild is refused
            claim.release();
            ReopeningChannel.closeQuietly(ch);
            throw e;
        }
    }

    /** The file system block size for the path (or its directory): what Java's O_DIRECT checks against. */
    static int alignment(Path path) {
        Path probe = Files.exists(path) ? path : path.getParent();
        long bs;
        try {
            bs = Files.getFileStore(probe).getBlockSize();
        } catch (IOException | UnsupportedOperationException e) {
            bs = 4096;
        }
        if (bs < BlockDevice.SECTOR || bs > (1 << 16) || Long.bitCount(bs) != 1) {
            throw new InvalidArgumentException(TYPE + ": the file system of " + path + " reports block size " + bs
                    + ", unusable for O_DIRECT; use the file target");
        }
        return (int) bs;
    }

    private static FileChannel openChannel(Path path) throws IOException {
        return FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE, ExtendedOpenOption.DIRECT);
    }

    @Override
    public String type() {
        return TYPE;
    }

    int alignment() {
        return align;
    }

    private boolean aligned(long v) {
        return (v & (align - 1)) == 0;
    }

    private long alignDown(long v) {
        return v & -(long) align;
    }

    private long alignUp(long v) {
        return (v + align - 1) & -(long) align;
    }

    private boolean alignedBuffer(ByteBuffer b) {
        return b.isDirect() && b.alignmentOffset(b.position(), align) == 0;
    }

    // ------------------------------------------------------------------ read

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        int n = dst.remaining();
        Requests.check(size, offset, n);
        if (n == 0) {
            return;
        }
        counters.reads.increment();
        counters.readBytes.add(n);
        if (aligned(offset) && aligned(n) && alignedBuffer(dst)) {
            io.readFully(dst, offset);
            return;
        }
        bounced.increment();
        long pos = offset;
        long end = offset + n;
        while (pos < end) {
            long wStart = alignDown(pos);
            long wEnd = Math.min(alignUp(end), wStart + LARGE);
            int wLen = (int) (wEnd - wStart);
            BufferPool pool = wLen <= smallPool.bufferSize() ? smallPool : largePool;
            ByteBuffer buf = pool.take();
            try {
                buf.limit(wLen);
                io.readFully(buf, wStart);
                long dataEnd = Math.min(end, wEnd);
                buf.limit((int) (dataEnd - wStart)).position((int) (pos - wStart));
                dst.put(buf);
                pos = dataEnd;
            } finally {
                pool.release(buf);
            }
        }
    }

    // ------------------------------------------------------------------ write

    @Override
    public void write(long offset, ByteBuffer src, int flags) throws IOException {
        int n = src.remaining();
        Requests.check(size, offset, n);
        if (n == 0) {
            return;
        }
        counters.writes.increment();
        counters.writtenBytes.add(n);
        writeRange(offset, n, src);
        if ((flags & FUA) != 0) {
            counters.fuaWrites.increment();
            io.force(offset);
        }
    }

    @Override
    public void writeZeroes(long offset, long length, int flags) throws IOException {
        Requests.check(size, offset, length);
        if ((flags & FAST_ZERO) != 0) {
            throw new FastZeroUnsupportedException(name);
        }
        if (length == 0) {
            return;
        }
        counters.zeroes.increment();
        counters.zeroedBytes.add(length);
        writeRange(offset, length, null);
        if ((flags & FUA) != 0) {
            io.force(offset);
        }
    }

    /** Writes {@code length} bytes from {@code src}, or zeroes if {@code src} is null. */
    private void writeRange(long offset, long length, ByteBuffer src) throws IOException {
        long end = offset + length;
        long pos = offset;
        if (src != null && aligned(offset) && aligned(length) && alignedBuffer(src)) {
            int limit = src.limit();
            try {
                while (pos < end) {
                    int len = (int) Math.min(ZERO_COPY_PIECE, end - pos);
                    lock(pos, pos + len, false, false);
                    try {
                        src.limit(src.position() + len);
                        io.writeFully(src, pos);
                    } finally {
                        unlock(pos, pos + len, false, false);
                    }
                    pos += len;
                }
            } finally {
                src.limit(limit);
            }
            return;
        }
        ByteBuffer zeroSource = null;
        while (pos < end) {
            long wStart = alignDown(pos);
            long wEnd = Math.min(alignUp(end), wStart + LARGE);
            int wLen = (int) (wEnd - wStart);
            long dataEnd = Math.min(end, wEnd);
            boolean headPartial = pos > wStart;
            boolean tailPartial = dataEnd < wEnd;
            if (src == null && !headPartial && !tailPartial) { // whole blocks of zeroes: no copy at all
                if (zeroSource == null) {
                    zeroSource = zeroBuffer().duplicate();
                }
                zeroSource.clear().limit(wLen);
                lock(wStart, wEnd, false, false);
                try {
                    io.writeFully(zeroSource, wStart);
                } finally {
                    unlock(wStart, wEnd, false, false);
                }
                pos = dataEnd;
                continue;
            }
            bounced.increment();
            BufferPool pool = wLen <= smallPool.bufferSize() ? smallPool : largePool;
            ByteBuffer buf = pool.take(); // before the locks: see the locking rules
            try {
                lock(wStart, wEnd, headPartial, tailPartial);
                try {
                    if (headPartial || tailPartial) {
                        readModifyWrites.increment();
                    }
                    if (headPartial) {
                        buf.limit(align).position(0);
                        io.readFully(buf, wStart);
                    }
                    if (tailPartial && !(headPartial && wEnd - align == wStart)) {
                        buf.limit(wLen).position(wLen - align);
                        io.readFully(buf, wEnd - align);
                    }
                    int from = (int) (pos - wStart);
                    int len = (int) (dataEnd - pos);
                    buf.limit(from + len).position(from);
                    if (src != null) {
                        int limit = src.limit();
                        src.limit(src.position() + len);
                        buf.put(src);
                        src.limit(limit);
                    } else {
                        while (buf.hasRemaining()) {
                            buf.put(ZERO_BYTES, 0, Math.min(ZERO_BYTES.length, buf.remaining()));
                        }
                    }
                    buf.limit(wLen).position(0);
                    io.writeFully(buf, wStart);
                } finally {
                    unlock(wStart, wEnd, headPartial, tailPartial);
                }
            } finally {
                pool.release(buf);
            }
            pos = dataEnd;
        }
    }

    private ByteBuffer zeroBuffer() {
        ByteBuffer z = zeroes;
        if (z == null) {
            synchronized (this) {
                z = zeroes;
                if (z == null) {
                    z = ByteBuffer.allocateDirect(LARGE + align).alignedSlice(align).limit(LARGE).slice().asReadOnlyBuffer();
                    zeroes = z;
                }
            }
        }
        return z;
    }

    // ------------------------------------------------------------------ striped granule locks

    /**
     * Locks the granules of the aligned window {@code [start, end)} (at most {@value #LARGE}
     * bytes, so fewer granules than stripes): exclusively the first granule if
     * {@code headPartial}, the last if {@code tailPartial}, the others shared; in ascending
     * stripe order.
     */
    private void lock(long start, long end, boolean headPartial, boolean tailPartial) {
        long g0 = start >>> GRANULE_SHIFT;
        long g1 = (end - 1) >>> GRANULE_SHIFT;
        int s0 = (int) (g0 % STRIPES);
        int s1 = (int) (g1 % STRIPES);
        if (s0 <= s1) {
            for (long g = g0; g <= g1; g++) {
                lockOne(g, g0, g1, headPartial, tailPartial);
            }
        } else { // the window wraps around the stripe table: stripes 0.. first
            long wrap = g1 - s1;
            for (long g = wrap; g <= g1; g++) {
                lockOne(g, g0, g1, headPartial, tailPartial);
            }
            for (long g = g0; g < wrap; g++) {
                lockOne(g, g0, g1, headPartial, tailPartial);
            }
        }
    }

    private void lockOne(long g, long g0, long g1, boolean headPartial, boolean tailPartial) {
        boolean exclusive = (g == g0 && headPartial) || (g == g1 && tailPartial);
        (exclusive ? exclusiveLocks : sharedLocks)[(int) (g % STRIPES)].lock();
    }

    /** Releases what {@link #lock} took for the same window and modes. */
    private void unlock(long start, long end, boolean headPartial, boolean tailPartial) {
        long g0 = start >>> GRANULE_SHIFT;
        long g1 = (end - 1) >>> GRANULE_SHIFT;
        for (long g = g0; g <= g1; g++) {
            boolean exclusive = (g == g0 && headPartial) || (g == g1 && tailPartial);
            (exclusive ? exclusiveLocks : sharedLocks)[(int) (g % STRIPES)].unlock();
        }
    }

    // ------------------------------------------------------------------ status

    @Override
    protected void putGeometry(Map<String, String> m) {
        m.put("alignment", Integer.toString(align));
    }

    @Override
    protected void putCounters(Map<String, String> m) {
        m.put("bounced", bounced.toString());
        m.put("read_modify_writes", readModifyWrites.toString());
        m.put("buffers", Integer.toString(smallPool.created() + largePool.created()));
    }
}
