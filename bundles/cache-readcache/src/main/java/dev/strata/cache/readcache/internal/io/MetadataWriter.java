package dev.strata.cache.readcache.internal.io;

import dev.strata.api.BlockDevice;
import dev.strata.cache.readcache.internal.format.Layout;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
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
    /** State changes that must reach a metadata block (a ticket per change, taken after it). */
    private final AtomicLong changes = new AtomicLong();
    /** Per metadata block: every change with a ticket up to this is in its last completed write. */
    private final long[] covered;

    MetadataWriter(BlockDevice cache, Layout layout, CacheState state, long uuidHash, int firstSeq) {
        this.cache = cache;
        this.layout = layout;
        this.state = state;
        this.uuidHash = uuidHash;
        this.seq = new AtomicInteger(firstSeq);
        this.covered = new long[(int) layout.metaBlocks()];
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
            writeLocked(m);
        } finally {
            l.unlock();
        }
    }

    /**
     * A ticket for a state change that has just been made (under the state lock, now released):
     * {@link #writeCovering} with it returns once an encoding that includes the change is durable.
     */
    long changed() {
        return changes.incrementAndGet();
    }

    /**
     * Makes metadata block {@code m} durable with every change up to {@code ticket}: writes it,
     * unless a write that began after the change has completed meanwhile — concurrent promotions
     * into one block (the policy hands out free slots in order) share one FUA write. Returns
     * whether it wrote.
     */
    boolean writeCovering(int m, long ticket) throws IOException {
        ReentrantLock l = locks[m % STRIPES];
        l.lock();
        try {
            if (covered[m] >= ticket) {
                return false; // a write encoded after the change completed while we waited
            }
            writeLocked(m);
            return true;
        } finally {
            l.unlock();
        }
    }

    private void writeLocked(int m) throws IOException {
        long upTo = changes.get(); // every change with a ticket up to here is visible to the encoding below
        ByteBuffer buf = buffers[m % STRIPES];
        buf.clear();
        for (int i = 0; i < Layout.META_BLOCK; i += 8) {
            buf.putLong(i, 0);
        }
        long[] mask = state.encode(m, buf, seq.incrementAndGet(), uuidHash);
        cache.write(layout.metaOffset(m), buf.clear(), BlockDevice.FUA);
        state.written(m, mask);
        covered[m] = Math.max(covered[m], upTo);
    }

    void writeAll(int[] blocks) throws IOException {
        for (int m : blocks) {
            write(m);
        }
    }

    /** {@link #writeCovering} for each of {@code blocks}; returns the writes done. */
    int writeAllCovering(int[] blocks, long ticket) throws IOException {
        int n = 0;
        for (int m : blocks) {
            n += writeCovering(m, ticket) ? 1 : 0;
        }
        return n;
    }
}
