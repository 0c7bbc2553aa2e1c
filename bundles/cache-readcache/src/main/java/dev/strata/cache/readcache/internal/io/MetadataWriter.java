package dev.strata.cache.readcache.internal.io;

import dev.strata.api.BlockDevice;
import dev.strata.cache.readcache.internal.format.Layout;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Writes metadata blocks, each as one FUA write of an encoding of the slots' current states.
 * Writes of the same block are serialised (a stripe lock held from the encoding to the end of the
 * write), so the device never holds an older encoding over a newer one; every write is FUA, so
 * once it returns what it encoded is durable, and the DISK flags can be cleared for the slots it
 * wrote invalid.
 */
final class MetadataWriter {
    private static final int STRIPES = 64;

    private final BlockDevice cache;
    private final Layout layout;
    private final CacheState state;
    private final long uuidHash;
    private final ReentrantLock[] locks = new ReentrantLock[STRIPES];
    private final ByteBuffer[] buffers = new ByteBuffer[STRIPES];
    private final AtomicInteger seq;

    MetadataWriter(BlockDevice cache, Layout layout, CacheState state, long uuidHash, int firstSeq) {
        this.cache = cache;
        this.layout = layout;
        this.state = state;
        this.uuidHash = uuidHash;
        this.seq = new AtomicInteger(firstSeq);
        for (int i = 0; i < STRIPES; i++) {
            locks[i] = new ReentrantLock();
            buffers[i] = ByteBuffer.allocateDirect(Layout.META_BLOCK);
        }
    }

    /** Encodes and writes metadata block {@code m} (FUA); durable when this returns. */
    void write(int m) throws IOException {
        ReentrantLock l = locks[m % STRIPES];
        l.lock();
        try {
            ByteBuffer buf = buffers[m % STRIPES];
            buf.clear();
            for (int i = 0; i < Layout.META_BLOCK; i += 8) {
                buf.putLong(i, 0);
            }
            long[] mask = state.encode(m, buf, seq.incrementAndGet(), uuidHash);
            cache.write(layout.metaOffset(m), buf.clear(), BlockDevice.FUA);
            state.written(m, mask);
        } finally {
            l.unlock();
        }
    }

    void writeAll(int[] blocks) throws IOException {
        for (int m : blocks) {
            write(m);
        }
    }
}
