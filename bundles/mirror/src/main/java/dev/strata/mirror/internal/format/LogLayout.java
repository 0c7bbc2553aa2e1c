package dev.strata.mirror.internal.format;

/**
 * Where things are on a {@code disk:} log device (see docs/formats/mirror-log.md).
 *
 * <pre>
 *   0      header copy A (4096 bytes)
 *   4096   header copy B (4096 bytes)
 *   8192   bitmap: one bit per region, region r = byte r/8, bit r%8 (least significant first);
 *          1 = dirty (the legs may differ there), 0 = clean (the legs agree there)
 * </pre>
 *
 * Two header copies, written alternately with a rising sequence, so that a header write torn by a
 * power cut leaves the other copy valid. The bitmap needs no checksum: every bit is independent,
 * and a torn bitmap write leaves each sector old or new, both of which are safe (a lost clear only
 * costs extra resync; a mark is never relied on before the write carrying it completed).
 */
public final class LogLayout {
    public static final int HEADER_SIZE = 4096;
    public static final long HEADER_A = 0;
    public static final long HEADER_B = HEADER_SIZE;
    public static final long BITMAP_OFFSET = 2L * HEADER_SIZE;
    /** The bitmap is written in whole sectors of this size. */
    public static final int BITMAP_SECTOR = 512;

    private LogLayout() {
    }

    /** Bytes of bitmap for {@code regions} regions, rounded up to whole 4 KiB blocks. */
    public static long bitmapBytes(long regions) {
        long bytes = (regions + 7) / 8;
        return (bytes + 4095) / 4096 * 4096;
    }

    /** The smallest log device for {@code regions} regions. */
    public static long deviceBytes(long regions) {
        return BITMAP_OFFSET + bitmapBytes(regions);
    }
}
