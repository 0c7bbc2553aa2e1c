package dev.strata.cache.readcache.internal.format;

/**
 * Where things are on a readcache's cache device:
 *
 * <pre>
 * [0, 4096)                          superblock
 * [4096, 4096 + 4096 * metaBlocks)   metadata blocks, 256 slot entries of 16 bytes each
 * [dataOffset, + slots * blockSize)  data slots (dataOffset aligned to the block size)
 * </pre>
 *
 * @param blockSize  cache block (slot) size in bytes
 * @param slots      number of data slots
 */
public record Layout(int blockSize, long slots) {
    public static final int VERSION = 1;
    public static final String POLICY = "readcache";
    /** Superblock and metadata blocks are 4096 bytes whatever the cache block size. */
    public static final int META_BLOCK = 4096;
    public static final int ENTRY = 16;
    public static final int ENTRIES_PER_BLOCK = META_BLOCK / ENTRY;
    public static final long META_OFFSET = META_BLOCK;
    public static final int MIN_BLOCK = 4096;
    public static final int MAX_BLOCK = 1 << 20;
    /** A cache smaller than this many slots is refused (it would cache next to nothing). */
    public static final long MIN_SLOTS = 16;
    /** Slots are {@code int}s in memory. */
    public static final long MAX_SLOTS = Integer.MAX_VALUE - 8;

    public Layout {
        if (Integer.bitCount(blockSize) != 1 || blockSize < MIN_BLOCK || blockSize > MAX_BLOCK) {
            throw new IllegalArgumentException("block size " + blockSize);
        }
        if (slots < 1 || slots > MAX_SLOTS) {
            throw new IllegalArgumentException("slots " + slots);
        }
    }

    /** The largest layout that fits {@code cacheBytes}, or null if fewer than {@link #MIN_SLOTS} slots fit. */
    public static Layout fit(long cacheBytes, int blockSize) {
        long lo = 0;
        long hi = Math.min(MAX_SLOTS, cacheBytes / blockSize);
        while (lo < hi) {
            long mid = (lo + hi + 1) >>> 1;
            if (bytes(mid, blockSize) <= cacheBytes) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo < MIN_SLOTS ? null : new Layout(blockSize, lo);
    }

    private static long bytes(long slots, int blockSize) {
        long meta = (slots + ENTRIES_PER_BLOCK - 1) / ENTRIES_PER_BLOCK;
        long data = align(META_OFFSET + meta * META_BLOCK, blockSize);
        return data + slots * blockSize;
    }

    private static long align(long v, int a) {
        return (v + a - 1) / a * a;
    }

    public long metaBlocks() {
        return (slots + ENTRIES_PER_BLOCK - 1) / ENTRIES_PER_BLOCK;
    }

    public long dataOffset() {
        return align(META_OFFSET + metaBlocks() * META_BLOCK, blockSize);
    }

    /** Byte offset of metadata block {@code m}. */
    public long metaOffset(long m) {
        return META_OFFSET + m * META_BLOCK;
    }

    /** Byte offset of data slot {@code slot}. */
    public long slotOffset(long slot) {
        return dataOffset() + slot * blockSize;
    }

    /** Bytes of the cache device in use. */
    public long usedBytes() {
        return bytes(slots, blockSize);
    }

    /** The metadata block holding {@code slot}'s entry. */
    public static int metaBlockOf(int slot) {
        return slot / ENTRIES_PER_BLOCK;
    }
}
