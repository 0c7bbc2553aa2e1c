package dev.strata.nbd.testing;

import dev.strata.api.BlockDevice;
import dev.strata.api.FastZeroUnsupportedException;
import dev.strata.api.Requests;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.BitSet;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A RAM disk for tests: tracks which 64 KiB chunks were ever written (for extents), counts
 * flushes and FUA writes, and can be told to block reads at an offset (to force out-of-order
 * replies). Requests are atomic with respect to each other (one lock over the contents), as
 * the BlockDevice contract asks of sectors: two unsynchronized copies into the same bytes could
 * leave a sector torn between two writers.
 */
public final class MemoryDevice implements BlockDevice {
    public static final int CHUNK = 64 * 1024;
    private final ByteBuffer data;
    private final Object contents = new Object();
    private final long size;
    private final BitSet allocated = new BitSet();
    private final boolean fastZero;
    public final AtomicInteger flushes = new AtomicInteger();
    public final AtomicInteger fuaWrites = new AtomicInteger();
    public final AtomicInteger discards = new AtomicInteger();
    public final AtomicInteger zeroes = new AtomicInteger();
    public final AtomicInteger lastZeroFlags = new AtomicInteger(-1);
    /** Reads at this offset wait for {@link #gate} first. */
    public volatile long blockReadsAt = -1;
    public volatile java.util.concurrent.CountDownLatch gate = new java.util.concurrent.CountDownLatch(0);

    public MemoryDevice(long size) {
        this(size, false);
    }

    public MemoryDevice(long size, boolean fastZero) {
        this.size = size;
        this.data = ByteBuffer.allocateDirect(Math.toIntExact(size));
        this.fastZero = fastZero;
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public int blockSize() {
        return 4096;
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        Requests.check(this, offset, dst.remaining());
        if (offset == blockReadsAt) {
            try {
                if (!gate.await(60, java.util.concurrent.TimeUnit.SECONDS)) {
                    throw new IOException("gate never opened");
                }
            } catch (InterruptedException e) {
                throw new IOException(e);
            }
        }
        ByteBuffer src = data.duplicate();
        src.position((int) offset).limit((int) offset + dst.remaining());
        synchronized (contents) {
            dst.put(src);
        }
    }

    @Override
    public void write(long offset, ByteBuffer src, int flags) throws IOException {
        Requests.check(this, offset, src.remaining());
        int n = src.remaining();
        ByteBuffer dst = data.duplicate();
        dst.position((int) offset);
        synchronized (contents) {
            dst.put(src);
        }
        mark(offset, n, true);
        if ((flags & FUA) != 0) {
            fuaWrites.incrementAndGet();
        }
    }

    private void mark(long offset, long length, boolean set) {
        if (length == 0) {
            return;
        }
        synchronized (allocated) {
            int from = (int) (offset / CHUNK);
            int to = (int) ((offset + length - 1) / CHUNK) + 1;
            if (set) {
                allocated.set(from, to);
            } else {
                // only whole chunks become holes
                int a = (int) ((offset + CHUNK - 1) / CHUNK);
                int b = (int) ((offset + length) / CHUNK);
                if (b > a) {
                    allocated.clear(a, b);
                }
            }
        }
    }

    @Override
    public void flush() {
        flushes.incrementAndGet();
    }

    @Override
    public void discard(long offset, long length) throws IOException {
        Requests.check(this, offset, length);
        discards.incrementAndGet();
    }

    @Override
    public void writeZeroes(long offset, long length, int flags) throws IOException {
        Requests.check(this, offset, length);
        if ((flags & FAST_ZERO) != 0 && !fastZero) {
            throw new FastZeroUnsupportedException("mem");
        }
        lastZeroFlags.set(flags);
        zeroes.incrementAndGet();
        synchronized (contents) {
            for (long i = 0; i < length; i++) {
                data.put((int) (offset + i), (byte) 0);
            }
        }
        if ((flags & NO_HOLE) == 0) {
            mark(offset, length, false);
        }
    }

    @Override
    public boolean canFastZero() {
        return fastZero;
    }

    @Override
    public void extents(long offset, long length, ExtentSink sink) throws IOException {
        Requests.check(this, offset, length);
        long pos = offset;
        long end = offset + length;
        while (pos < end) {
            boolean a;
            synchronized (allocated) {
                a = allocated.get((int) (pos / CHUNK));
            }
            long next = Math.min(end, (pos / CHUNK + 1) * CHUNK);
            sink.extent(pos, next - pos, a ? 0 : ExtentSink.HOLE | ExtentSink.ZERO);
            pos = next;
        }
    }

    /** A copy of the bytes at [offset, offset+len). */
    public byte[] bytes(long offset, int len) {
        byte[] b = new byte[len];
        synchronized (contents) {
            data.duplicate().position((int) offset).get(b);
        }
        return b;
    }

    @Override
    public void close() {
    }
}
