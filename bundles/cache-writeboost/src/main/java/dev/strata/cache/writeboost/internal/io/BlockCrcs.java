package dev.strata.cache.writeboost.internal.io;

import dev.strata.cache.writeboost.internal.format.BlockCrc;
import dev.strata.cache.writeboost.internal.format.Layout;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * The CRC32C of each data slot of the log buffers, taken by the writer that copied a run of full
 * blocks right after its copy (the data is still in the CPU's caches), so that the flusher builds
 * a record's data CRC from them ({@link BlockCrc#append}) instead of reading every byte again.
 *
 * <h2>Rules</h2>
 * Slots are indexed like {@link LogState#copying} (buffer × {@code SEGMENT_BLOCKS} + block).
 * A slot's CRC is <em>known</em> only from its writer's {@link #take} after the copy and before
 * the slot's copy flag clears, until anything else writes the slot: every reservation and every
 * other write into a slot (a partial or merged block, an overwrite in the open record, an
 * injected clean block) calls {@link #forget} under {@code log.lock}. A slot not known is read
 * and computed by the flusher, so a missing {@code take} costs time, never a wrong CRC. The
 * flusher reads a record's slots only after it is sealed (no write changes it any more) and its
 * copy flags are clear (their release stores publish the CRCs). Each slot has its own CRC32C and
 * a 4 KiB view of its block, used only by whoever owns the slot at the time (its writer during
 * the copy, the flusher after the seal): nothing is allocated per block.
 */
final class BlockCrcs {
    static final int SB = Layout.SEGMENT_BLOCKS;
    static final int BS = Layout.BLOCK;
    /** Set in {@link #crc} when the low 32 bits hold the slot's CRC. */
    private static final long KNOWN = 1L << 32;

    private final long[] crc;
    private final CRC32C[] sums;
    private final ByteBuffer[] views;

    BlockCrcs(ByteBuffer[] bufs) {
        int n = bufs.length * SB;
        crc = new long[n];
        sums = new CRC32C[n];
        views = new ByteBuffer[n];
        for (int i = 0; i < n; i++) {
            sums[i] = new CRC32C();
            views[i] = bufs[i / SB].slice((i % SB) * BS, BS);
        }
    }

    /** The slot's content is about to change other than by a writer's run copy. Lock held. */
    void forget(int slot) {
        crc[slot] = 0;
    }

    /** Computes the CRCs of {@code count} slots from {@code slot} just copied (the caller's reserved run, flags still set). */
    void take(int slot, int count) {
        for (int k = slot; k < slot + count; k++) {
            crc[k] = KNOWN | (of(k) & 0xFFFFFFFFL);
        }
    }

    /** CRC32C of the slot's block, read from the buffer. */
    private int of(int slot) {
        CRC32C c = sums[slot];
        c.reset();
        c.update(views[slot].clear());
        return (int) c.getValue();
    }

    /**
     * The CRC32C of {@code data} consecutive data blocks from {@code firstSlot} (a sealed record's
     * data, copies complete): the writers' CRCs combined, the unknown ones computed here.
     */
    int dataCrc(int firstSlot, int data) {
        int result = 0;
        for (int k = firstSlot; k < firstSlot + data; k++) {
            long c = crc[k];
            int block = (c & KNOWN) != 0 ? (int) c : of(k);
            result = k == firstSlot ? block : BlockCrc.append(result, block);
        }
        return result;
    }
}
