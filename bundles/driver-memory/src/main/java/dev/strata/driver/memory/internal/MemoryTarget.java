package dev.strata.driver.memory.internal;

import dev.strata.api.DeviceIOException;
import dev.strata.api.Requests;
import dev.strata.api.Target;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.StampedLock;

/**
 * The {@code memory} target: a RAM disk on the Java heap.
 *
 * <p>The device is cut into {@value #CHUNK}-byte chunks, allocated on first write; a chunk never
 * written (or freed) reads as zeroes. The chunk table has two levels (a directory of segments of
 * {@value #SEGMENT_CHUNKS} chunks, each allocated on first use), so a 64 GiB device costs a few
 * kilobytes until it is written. {@code writeZeroes} and {@code discard} free whole chunks and
 * zero partial ones, so both are fast and a discarded range reads as zeroes.
 *
 * <p><b>Locking.</b> Each chunk maps to one of {@value #STRIPES} striped read/write locks (chunk
 * index modulo the stripe count). Readers of a chunk hold its stripe's read lock while copying,
 * writers (write, zero, discard, allocation and freeing) its write lock; a request spanning
 * several chunks takes them one chunk at a time, never two at once. So every sector is read and
 * written whole (no torn sectors) and no two threads allocate the same chunk.
 *
 * <p>Durable = written; {@code flush} is a no-op. The contents live as long as the target: a
 * close (device removed or reloaded, bundle updated, JVM stopped) discards them.
 */
final class MemoryTarget implements Target {
    static final String TYPE = "memory";
    static final int CHUNK_SHIFT = 16;
    static final int CHUNK = 1 << CHUNK_SHIFT; // 64 KiB
    private static final int CHUNK_MASK = CHUNK - 1;
    static final int SEGMENT_SHIFT = 10;
    static final int SEGMENT_CHUNKS = 1 << SEGMENT_SHIFT; // 64 MiB of data per segment
    private static final int STRIPES = 256;
    /** Largest device: 16 TiB (a directory of 256 Ki segments). */
    static final long MAX_SIZE = 1L << 44;
    private static final byte[] ZEROES = new byte[CHUNK];

    private final long size;
    private final int blockSize;
    private volatile AtomicReferenceArray<AtomicReferenceArray<byte[]>> directory;
    private final Lock[] readLocks = new Lock[STRIPES];
    private final Lock[] writeLocks = new Lock[STRIPES];

    private final AtomicLong allocatedChunks = new AtomicLong();
    private final HeapBudget budget;
    private final LongAdder reads = new LongAdder();
    private final LongAdder readBytes = new LongAdder();
    private final LongAdder writes = new LongAdder();
    private final LongAdder writtenBytes = new LongAdder();
    private final LongAdder fuaWrites = new LongAdder();
    private final LongAdder flushes = new LongAdder();
    private final LongAdder zeroes = new LongAdder();
    private final LongAdder zeroedBytes = new LongAdder();
    private final LongAdder discards = new LongAdder();

    MemoryTarget(long size) {
        this(size, HeapBudget.ofHeap());
    }

    MemoryTarget(long size, HeapBudget budget) {
        this.budget = budget;
        if (size <= 0 || size % SECTOR != 0 || size > MAX_SIZE) {
            throw new IllegalArgumentException("size " + size);
        }
        this.size = size;
        this.blockSize = size % 4096 == 0 ? 4096 : SECTOR;
        long chunks = (size + CHUNK - 1) >>> CHUNK_SHIFT;
        this.directory = new AtomicReferenceArray<>((int) ((chunks + SEGMENT_CHUNKS - 1) >>> SEGMENT_SHIFT));
        for (int i = 0; i < STRIPES; i++) {
            StampedLock l = new StampedLock();
            readLocks[i] = l.asReadLock();
            writeLocks[i] = l.asWriteLock();
        }
    }

    @Override
    public String type() {
        return TYPE;
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public int blockSize() {
        return blockSize;
    }

    @Override
    public boolean canFastZero() {
        return true;
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        int n = dst.remaining();
        Requests.check(size, offset, n);
        AtomicReferenceArray<AtomicReferenceArray<byte[]>> dir = open(offset);
        reads.increment();
        readBytes.add(n);
        long pos = offset;
        while (dst.hasRemaining()) {
            long ci = pos >>> CHUNK_SHIFT;
            int within = (int) (pos & CHUNK_MASK);
            int len = Math.min(CHUNK - within, dst.remaining());
            Lock lock = readLocks[(int) (ci % STRIPES)];
            lock.lock();
            try {
                byte[] chunk = chunk(dir, ci);
                if (chunk == null) {
                    dst.put(ZEROES, 0, len);
                } else {
                    dst.put(chunk, within, len);
                }
            } finally {
                lock.unlock();
            }
            pos += len;
        }
    }

    @Override
    public void write(long offset, ByteBuffer src, int flags) throws IOException {
        int n = src.remaining();
        Requests.check(size, offset, n);
        AtomicReferenceArray<AtomicReferenceArray<byte[]>> dir = open(offset);
        writes.increment();
        writtenBytes.add(n);
        if ((flags & FUA) != 0) {
            fuaWrites.increment();
        }
        long pos = offset;
        while (src.hasRemaining()) {
            long ci = pos >>> CHUNK_SHIFT;
            int within = (int) (pos & CHUNK_MASK);
            int len = Math.min(CHUNK - within, src.remaining());
            Lock lock = writeLocks[(int) (ci % STRIPES)];
            lock.lock();
            try {
                byte[] chunk = chunk(dir, ci);
                if (chunk == null) {
                    chunk = allocate(dir, ci, pos);
                }
                src.get(chunk, within, len);
            } finally {
                lock.unlock();
            }
            pos += len;
        }
    }

    @Override
    public void flush() throws IOException {
        open(-1);
        flushes.increment();
    }

    @Override
    public void discard(long offset, long length) throws IOException {
        Requests.check(size, offset, length);
        AtomicReferenceArray<AtomicReferenceArray<byte[]>> dir = open(offset);
        discards.increment();
        zero(dir, offset, length);
    }

    @Override
    public void writeZeroes(long offset, long length, int flags) throws IOException {
        Requests.check(size, offset, length);
        AtomicReferenceArray<AtomicReferenceArray<byte[]>> dir = open(offset);
        zeroes.increment();
        zeroedBytes.add(length);
        zero(dir, offset, length);
    }

    /** Frees whole chunks in the range and zeroes the parts of partial ones. */
    private void zero(AtomicReferenceArray<AtomicReferenceArray<byte[]>> dir, long offset, long length) {
        long pos = offset;
        long end = offset + length;
        while (pos < end) {
            long ci = pos >>> CHUNK_SHIFT;
            int within = (int) (pos & CHUNK_MASK);
            int len = (int) Math.min(CHUNK - within, end - pos);
            AtomicReferenceArray<byte[]> segment = dir.get((int) (ci >>> SEGMENT_SHIFT));
            if (segment == null) { // nothing allocated in this whole segment: skip it
                pos = (((ci >>> SEGMENT_SHIFT) + 1) << (SEGMENT_SHIFT + CHUNK_SHIFT));
                continue;
            }
            int slot = (int) (ci & (SEGMENT_CHUNKS - 1));
            if (segment.get(slot) != null) {
                Lock lock = writeLocks[(int) (ci % STRIPES)];
                lock.lock();
                try {
                    byte[] chunk = segment.get(slot);
                    if (chunk != null) {
                        if (len == CHUNK) {
                            segment.set(slot, null);
                            allocatedChunks.decrementAndGet();
                            budget.give(CHUNK);
                        } else {
                            Arrays.fill(chunk, within, within + len, (byte) 0);
                        }
                    }
                } finally {
                    lock.unlock();
                }
            }
            pos += len;
        }
    }

    @Override
    public void extents(long offset, long length, ExtentSink sink) throws IOException {
        Requests.check(size, offset, length);
        AtomicReferenceArray<AtomicReferenceArray<byte[]>> dir = open(offset);
        long end = offset + length;
        long runStart = offset;
        int runFlags = -1;
        long pos = offset;
        while (pos < end) {
            long ci = pos >>> CHUNK_SHIFT;
            AtomicReferenceArray<byte[]> segment = dir.get((int) (ci >>> SEGMENT_SHIFT));
            long next;
            int flags;
            if (segment == null) {
                next = ((ci >>> SEGMENT_SHIFT) + 1) << (SEGMENT_SHIFT + CHUNK_SHIFT);
                flags = ExtentSink.HOLE | ExtentSink.ZERO;
            } else {
                next = (ci + 1) << CHUNK_SHIFT;
                flags = segment.get((int) (ci & (SEGMENT_CHUNKS - 1))) == null ? ExtentSink.HOLE | ExtentSink.ZERO : 0;
            }
            next = Math.min(next, end);
            if (flags != runFlags) {
                if (runFlags >= 0) {
                    sink.extent(runStart, pos - runStart, runFlags);
                }
                runStart = pos;
                runFlags = flags;
            }
            pos = next;
        }
        if (runFlags >= 0) {
            sink.extent(runStart, end - runStart, runFlags);
        }
    }

    private static byte[] chunk(AtomicReferenceArray<AtomicReferenceArray<byte[]>> dir, long ci) {
        AtomicReferenceArray<byte[]> segment = dir.get((int) (ci >>> SEGMENT_SHIFT));
        return segment == null ? null : segment.get((int) (ci & (SEGMENT_CHUNKS - 1)));
    }

    /** Called with the chunk's stripe write lock held; refused (an I/O error) when the heap budget is spent. */
    private byte[] allocate(AtomicReferenceArray<AtomicReferenceArray<byte[]>> dir, long ci, long offset)
            throws DeviceIOException {
        if (!budget.take(CHUNK)) {
            throw new DeviceIOException("memory", offset, "the Java heap is full: memory devices hold "
                    + mib(budget.used()) + ", all that this JVM's heap (" + mib(Runtime.getRuntime().maxMemory())
                    + ") leaves them; discard or remove a memory device, or start Strata with more heap (JAVA_OPTS=-Xmx…)");
        }
        int si = (int) (ci >>> SEGMENT_SHIFT);
        AtomicReferenceArray<byte[]> segment = dir.get(si);
        if (segment == null) {
            AtomicReferenceArray<byte[]> fresh = new AtomicReferenceArray<>(SEGMENT_CHUNKS);
            segment = dir.compareAndSet(si, null, fresh) ? fresh : dir.get(si);
        }
        byte[] chunk = new byte[CHUNK];
        segment.set((int) (ci & (SEGMENT_CHUNKS - 1)), chunk);
        allocatedChunks.incrementAndGet();
        return chunk;
    }

    private AtomicReferenceArray<AtomicReferenceArray<byte[]>> open(long offset) throws DeviceIOException {
        AtomicReferenceArray<AtomicReferenceArray<byte[]>> dir = directory;
        if (dir == null) {
            throw new DeviceIOException("memory", offset, "the device is closed");
        }
        return dir;
    }

    private static String mib(long bytes) {
        return (bytes >> 20) + " MiB";
    }

    /** Bytes of memory held for data. */
    long allocatedBytes() {
        return allocatedChunks.get() * CHUNK;
    }

    @Override
    public Map<String, String> status() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("size", Long.toString(size));
        m.put("block_size", Integer.toString(blockSize));
        m.put("chunk_size", Integer.toString(CHUNK));
        m.put("allocated_bytes", Long.toString(allocatedBytes()));
        m.put("reads", reads.toString());
        m.put("read_bytes", readBytes.toString());
        m.put("writes", writes.toString());
        m.put("written_bytes", writtenBytes.toString());
        m.put("fua_writes", fuaWrites.toString());
        m.put("flushes", flushes.toString());
        m.put("zeroes", zeroes.toString());
        m.put("zeroed_bytes", zeroedBytes.toString());
        m.put("discards", discards.toString());
        return m;
    }

    @Override
    public void close() {
        directory = null; // the data goes with the target
        budget.give(allocatedChunks.getAndSet(0) * CHUNK);
    }
}
