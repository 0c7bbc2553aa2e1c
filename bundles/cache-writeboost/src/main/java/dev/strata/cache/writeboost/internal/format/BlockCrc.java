package dev.strata.cache.writeboost.internal.format;

/**
 * The CRC32C of a record's data blocks built from the CRC32C of each 4 KiB block, without reading
 * the data again: {@code crc(A || B) = shift(crc(A)) ^ crc(B)} for |B| = 4096 bytes, where
 * {@code shift} multiplies by x^(8 * 4096) modulo the CRC32C polynomial (zlib's
 * {@code crc32_combine}, with the length fixed). The shift is linear over GF(2), so it is four
 * table look-ups (one 256-entry table per byte of the CRC), built once.
 *
 * <p>Why: the flusher computed each record's data CRC by reading every data byte once more,
 * long after the writer had copied it (cold in the caches): a tenth of the NBD server's CPU at
 * 512 KiB writes. A writer's CRC of the block it has just copied reads it hot, and this combine
 * costs the flusher a few nanoseconds per block. Same value, same format.
 */
public final class BlockCrc {
    private BlockCrc() {
    }

    /** CRC32C's polynomial, reflected. */
    private static final int POLY = 0x82F63B78;
    private static final int[] T0 = new int[256];
    private static final int[] T1 = new int[256];
    private static final int[] T2 = new int[256];
    private static final int[] T3 = new int[256];

    static {
        // x^(2^15) mod P: 2^15 bits = 4096 bytes; in the reflected form bit 31 is x^0, bit 30 x^1
        int op = 1 << 30;
        for (int i = 0; i < 15; i++) {
            op = multModP(op, op);
        }
        for (int v = 0; v < 256; v++) {
            T0[v] = multModP(op, v);
            T1[v] = multModP(op, v << 8);
            T2[v] = multModP(op, v << 16);
            T3[v] = multModP(op, v << 24);
        }
    }

    /** a * b modulo P, both reflected (zlib's multmodp). */
    static int multModP(int a, int b) {
        int m = 1 << 31;
        int p = 0;
        while (true) {
            if ((a & m) != 0) {
                p ^= b;
                if ((a & (m - 1)) == 0) {
                    return p;
                }
            }
            m >>>= 1;
            b = (b & 1) != 0 ? (b >>> 1) ^ POLY : b >>> 1;
        }
    }

    /** The CRC32C of {@code A || B} from {@code crcA} = CRC32C(A) and {@code crcB} = CRC32C(B), B being one 4 KiB block. */
    public static int append(int crcA, int crcB) {
        return T0[crcA & 0xFF] ^ T1[(crcA >>> 8) & 0xFF] ^ T2[(crcA >>> 16) & 0xFF] ^ T3[crcA >>> 24] ^ crcB;
    }
}
