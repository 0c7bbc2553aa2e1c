package dev.strata.cache.writeboost.internal.testing;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceIOException;
import dev.strata.api.Requests;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongPredicate;

/**
 * A small in-memory disk for tests, with a volatile write cache: {@link #crash(Random)} returns
 * the image a power cut would leave (everything flushed, plus any subset of the unflushed writes,
 * each 4 KiB piece of each independently, in issue order), and hooks to fail requests.
 */
public final class MemDevice implements BlockDevice {
    private final String name;
    private final long size;
    private final int blockSize;
    private final byte[] current;
    private byte[] durable;
    private final List<long[]> pending = new ArrayList<>(); // {offset, length, seq}
    private final List<byte[]> pendingData = new ArrayList<>();
    public final AtomicLong bytesRead = new AtomicLong();
    public final AtomicLong bytesWritten = new AtomicLong();
    public final AtomicLong reads = new AtomicLong();
    public final AtomicLong writes = new AtomicLong();
    public final AtomicLong flushes = new AtomicLong();
    /** Fails a read whose offset matches. */
    public volatile LongPredicate failRead = o -> false;
    /** Fails a write whose offset matches. */
    public volatile LongPredicate failWrite = o -> false;
    public volatile boolean failFlush;
    /** Simulated latency per request in microseconds (0: none). */
    public volatile long delayMicros;

    public MemDevice(String name, long size) {
        this(name, size, 4096, new byte[(int) size]);
    }

    private MemDevice(String name, long size, int blockSize, byte[] image) {
        this.name = name;
        this.size = size;
        this.blockSize = blockSize;
        this.current = image;
        this.durable = image.clone();
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public int blockSize() {
        return blockSize;
    }

    private void delay() {
        long d = delayMicros;
        if (d > 0) {
            long end = System.nanoTime() + d * 1000;
            while (System.nanoTime() < end) {
                Thread.onSpinWait();
            }
        }
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        int n = dst.remaining();
        Requests.check(size, offset, n);
        if (failRead.test(offset)) {
            throw new DeviceIOException(name, offset, "injected read error");
        }
        delay();
        synchronized (this) {
            dst.put(current, (int) offset, n);
        }
        bytesRead.addAndGet(n);
        reads.incrementAndGet();
    }

    @Override
    public void write(long offset, ByteBuffer src, int flags) throws IOException {
        int n = src.remaining();
        Requests.check(size, offset, n);
        if (failWrite.test(offset)) {
            throw new DeviceIOException(name, offset, "injected write error");
        }
        delay();
        synchronized (this) {
            src.get(current, (int) offset, n);
            byte[] copy = new byte[n];
            System.arraycopy(current, (int) offset, copy, 0, n);
            pending.add(new long[] {offset, n});
            pendingData.add(copy);
            if ((flags & FUA) != 0) {
                System.arraycopy(copy, 0, durable, (int) offset, n);
            }
        }
        bytesWritten.addAndGet(n);
        writes.incrementAndGet();
    }

    @Override
    public synchronized void flush() throws IOException {
        if (failFlush) {
            throw new DeviceIOException(name, -1, "injected flush error");
        }
        for (int i = 0; i < pending.size(); i++) {
            long[] p = pending.get(i);
            byte[] d = pendingData.get(i);
            System.arraycopy(d, 0, durable, (int) p[0], (int) p[1]);
        }
        pending.clear();
        pendingData.clear();
        flushes.incrementAndGet();
    }

    @Override
    public void discard(long offset, long length) throws IOException {
        Requests.check(size, offset, length);
    }

    @Override
    public void writeZeroes(long offset, long length, int flags) throws IOException {
        Requests.check(size, offset, length);
        write(offset, ByteBuffer.allocate((int) length), flags);
    }

    @Override
    public void close() {
    }

    /** The image after a power cut: durable data plus a random subset of unflushed 4 KiB pieces. */
    public synchronized MemDevice crash(Random rnd) {
        byte[] img = durable.clone();
        for (int i = 0; i < pending.size(); i++) {
            long[] p = pending.get(i);
            byte[] d = pendingData.get(i);
            for (int o = 0; o < p[1]; o += 4096) {
                if (rnd.nextBoolean()) {
                    System.arraycopy(d, o, img, (int) p[0] + o, (int) Math.min(4096, p[1] - o));
                }
            }
        }
        return new MemDevice(name, size, blockSize, img);
    }

    /** A copy of the current contents (as if everything had been flushed). */
    public synchronized MemDevice copy() {
        return new MemDevice(name, size, blockSize, current.clone());
    }

    /** Direct access to the current image (tests corrupt bytes with it). */
    public synchronized byte[] image() {
        return current;
    }

    public synchronized void corrupt(long offset) {
        current[(int) offset] ^= 0x5A;
        durable[(int) offset] ^= 0x5A;
    }

    @Override
    public String toString() {
        return name;
    }
}
