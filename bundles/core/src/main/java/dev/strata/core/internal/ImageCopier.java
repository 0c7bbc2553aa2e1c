package dev.strata.core.internal;

import java.io.IOException;
import java.nio.ByteBuffer;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceManager.ReplaceProgress;

/**
 * Copies a cache device, chunk by chunk, to another one for {@code cache:replace}: the chunks
 * {@link WriteTracker} has marked, each taken (unmarked) before it is read. The device's first
 * block — where every cache policy keeps its superblock — is written as zeroes until
 * {@link #copyHeader}, so that the copy reads as a blank device (which every policy formats
 * afresh, never recovers) until the moment the target is reopened over it: a crash or a cancel
 * half-way leaves no half copy that a later open could take for a cache.
 */
final class ImageCopier {
    /** The first block, blank until the end. All three policies decode their superblock from it; all zero reads as BLANK. */
    static final int HEADER = 4096;
    private final BlockDevice from;
    private final BlockDevice to;
    private final WriteTracker marks;
    private final ReplaceProgress progress;
    private final long size;
    private final ByteBuffer buf;
    private long copied;
    private int pass;
    /** Cancel requested / pause begun; one excludes the other (see {@link #cancel}, {@link #beginPause}). */
    private boolean cancelled;
    private boolean pausing;

    ImageCopier(BlockDevice from, BlockDevice to, WriteTracker marks, ReplaceProgress progress) {
        this.from = from;
        this.to = to;
        this.marks = marks;
        this.progress = progress == null ? (c, l, p) -> { } : progress;
        this.size = from.size();
        this.buf = ByteBuffer.allocateDirect(marks.chunkBytes());
    }

    long copiedBytes() {
        return copied;
    }

    int passes() {
        return pass;
    }

    long markedBytes() {
        return Math.min(size, marks.marked() * marks.chunkBytes());
    }

    /** Zeroes the new device's first block, durably, before anything else is copied to it. */
    void blankHeader() throws IOException {
        to.write(0, ByteBuffer.allocate(HEADER), 0);
        to.flush();
    }

    /** Asks the copy to stop; false once the pause has begun (too late). */
    synchronized boolean cancel() {
        if (pausing) {
            return false;
        }
        cancelled = true;
        return true;
    }

    synchronized boolean cancelled() {
        return cancelled;
    }

    /** From now on a cancel is refused; false if one came first. */
    synchronized boolean beginPause() {
        if (cancelled) {
            return false;
        }
        pausing = true;
        return true;
    }

    /**
     * One pass over the marked chunks while I/O runs; a cancel ends it with
     * {@link InterruptedException} between two chunks (the copy is incomplete, nothing else changed).
     */
    void pass() throws IOException, InterruptedException {
        pass(true);
    }

    /** The pass inside the pause: not cancellable. */
    void finalPass() throws IOException {
        try {
            pass(false);
        } catch (InterruptedException e) {
            throw new AssertionError(e); // not cancellable: never thrown
        }
    }

    private void pass(boolean cancellable) throws IOException, InterruptedException {
        pass++;
        long chunks = marks.chunks();
        long lastReport = System.nanoTime();
        for (long c = 0; c < chunks; c++) {
            if (cancellable && cancelled()) {
                progress.update(copied, markedBytes(), pass);
                throw new InterruptedException("cache:replace cancelled");
            }
            if (!marks.take(c)) {
                continue;
            }
            copyChunk(c);
            long now = System.nanoTime();
            if (now - lastReport > 200_000_000L) {
                lastReport = now;
                progress.update(copied, markedBytes(), pass);
            }
        }
        progress.update(copied, markedBytes(), pass);
    }

    private void copyChunk(long c) throws IOException {
        long off = c * marks.chunkBytes();
        int len = (int) Math.min(marks.chunkBytes(), size - off);
        buf.clear().limit(len);
        from.read(off, buf);
        buf.flip();
        if (off == 0) {
            for (int i = 0; i < Math.min(HEADER, len); i++) {
                buf.put(i, (byte) 0);
            }
        }
        to.write(off, buf, 0);
        copied += len;
    }

    /** The last step of the copy (inside the pause): the real first block, then a flush of the new device. */
    void copyHeader() throws IOException {
        ByteBuffer h = ByteBuffer.allocate(HEADER);
        from.read(0, h);
        h.flip();
        to.write(0, h, 0);
        to.flush();
        copied += HEADER;
    }
}
