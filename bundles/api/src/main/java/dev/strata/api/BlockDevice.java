package dev.strata.api;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * A block device with exactly the semantics of a disk.
 *
 * <h2>Addressing</h2>
 * Offsets and lengths are in bytes and must be multiples of {@link #SECTOR} (512), whatever
 * {@link #blockSize()} is. A request that is misaligned throws {@link MisalignedRequestException};
 * one that reaches past {@link #size()} throws {@link OutOfRangeException}. Both are thrown
 * <em>before</em> any data moves, and both are {@link IllegalArgumentException}s.
 * {@link Requests#check(BlockDevice, long, long)} is the one place these rules are written.
 *
 * <h2>Durability</h2>
 * Durability is exactly a disk's. A completed {@link #write} may sit in a volatile cache: it is
 * durable once a later {@link #flush()} completes, or at once if it carried {@link #FUA}.
 * {@code flush()} makes durable every write that <em>completed</em> before {@code flush()} was
 * called; writes still in flight when it is called may or may not be covered. The same holds for
 * {@link #writeZeroes} and {@link #discard}.
 *
 * <h2>Contents</h2>
 * Reads of never-written areas return zeroes. {@link #discard} is advisory: afterwards a read
 * returns either the old data or zeroes. {@link #writeZeroes} is not advisory: afterwards the
 * range reads as zeroes.
 *
 * <h2>Concurrency and errors</h2>
 * Implementations are thread-safe: any number of calls may be in flight at once from different
 * threads. Two overlapping writes in flight at once may land in either order (as on a disk).
 * I/O errors are {@link DeviceIOException}s naming the device and the offset. No call blocks
 * forever: a stuck lower device surfaces as a {@link DeviceTimeoutException}.
 */
public interface BlockDevice extends Closeable {

    /** The unit of addressing: every offset and length is a multiple of this. */
    int SECTOR = 512;

    /** Write flag: the data is durable when the call returns (Force Unit Access). */
    int FUA = 1;
    /** {@link #writeZeroes} flag: the range must stay allocated (no hole may be punched). */
    int NO_HOLE = 2;
    /**
     * {@link #writeZeroes} flag: fail at once with {@link FastZeroUnsupportedException} unless
     * zeroing is faster than writing zeroes (see {@link #canFastZero()}).
     */
    int FAST_ZERO = 4;

    /** Size in bytes; a multiple of {@link #blockSize()}. Constant for the device's life. */
    long size();

    /** The logical block size the device prefers: 512 or 4096. I/O of this size and alignment is fastest. */
    int blockSize();

    /**
     * Reads {@code dst.remaining()} bytes at {@code offset} into {@code dst}, advancing its
     * position to its limit.
     */
    void read(long offset, ByteBuffer dst) throws IOException;

    /**
     * Writes {@code src.remaining()} bytes from {@code src} at {@code offset}, advancing its
     * position to its limit. {@code flags} may hold {@link #FUA}.
     */
    void write(long offset, ByteBuffer src, int flags) throws IOException;

    /** Makes durable every write that completed before this call was made. */
    void flush() throws IOException;

    /** Advisory: the range's contents are no longer needed (they read as old data or zeroes). */
    void discard(long offset, long length) throws IOException;

    /**
     * The range reads as zeroes afterwards. {@code flags} may hold {@link #FUA},
     * {@link #NO_HOLE} and {@link #FAST_ZERO}.
     */
    void writeZeroes(long offset, long length, int flags) throws IOException;

    /** Whether {@link #writeZeroes} is faster than writing zeroes (so {@link #FAST_ZERO} succeeds). */
    default boolean canFastZero() {
        return false;
    }

    /**
     * Reports the allocation of {@code [offset, offset+length)} as a sequence of extents, in
     * order and without gaps, covering at least the first byte of the range. Used for NBD's
     * {@code base:allocation}. The default reports the whole range as allocated data.
     */
    default void extents(long offset, long length, ExtentSink sink) throws IOException {
        Requests.check(this, offset, length);
        sink.extent(offset, length, 0);
    }

    /** Receives extents from {@link BlockDevice#extents}. */
    @FunctionalInterface
    interface ExtentSink {
        /** The range is unallocated (reads may still return data unless {@link #ZERO} is set too). */
        int HOLE = 1;
        /** The range reads as zeroes. */
        int ZERO = 2;

        /** One extent; {@code flags} is a combination of {@link #HOLE} and {@link #ZERO}. */
        void extent(long offset, long length, int flags);
    }
}
