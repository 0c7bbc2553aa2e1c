package dev.strata.testsupport.crash;

import dev.strata.api.BlockDevice;

import java.nio.ByteBuffer;

/**
 * Self-describing sector contents. A written sector holds a 64-bit <em>token</em> — the id of the
 * write that produced it and the sector's own index — followed by its complement and a
 * pseudo-random fill derived from the token. Reading a sector back tells exactly which write
 * put it there ({@link #decode}); a sector that is neither a valid pattern nor all zeroes is
 * {@link #GARBAGE} (torn inside a sector, corrupted, or misdirected data).
 */
public final class SectorPattern {
    /** The token of a sector of zeroes (never written, zeroed or discarded). */
    public static final long ZERO = 0;
    /** The token reported for a sector that holds neither zeroes nor a valid pattern. */
    public static final long GARBAGE = -1;

    private static final int SECTOR_BITS = 28;

    private SectorPattern() {
    }

    /** The token that write number {@code writeId} (1, 2, …) leaves in sector {@code sector}. */
    public static long token(long writeId, long sector) {
        if (writeId <= 0 || sector < 0 || sector >= (1L << SECTOR_BITS)) {
            throw new IllegalArgumentException("writeId " + writeId + ", sector " + sector);
        }
        return (writeId << SECTOR_BITS) | sector;
    }

    /** The write id of a token (0 for {@link #ZERO}). */
    public static long writeId(long token) {
        return token <= 0 ? 0 : token >>> SECTOR_BITS;
    }

    /** A readable name: {@code zero}, {@code garbage}, or {@code w12} (write #12, sector implied). */
    public static String describe(long token) {
        if (token == ZERO) {
            return "zero";
        }
        if (token == GARBAGE) {
            return "garbage";
        }
        long sector = token & ((1L << SECTOR_BITS) - 1);
        return "w" + writeId(token) + "@s" + sector;
    }

    /** Writes the 512-byte pattern of {@code token} at {@code dst}'s position, advancing it. */
    public static void fill(ByteBuffer dst, long token) {
        if (token == ZERO) {
            for (int i = 0; i < BlockDevice.SECTOR / 8; i++) {
                dst.putLong(0);
            }
            return;
        }
        dst.putLong(token);
        dst.putLong(~token);
        long x = token * 0x9E3779B97F4A7C15L + 1;
        for (int i = 2; i < BlockDevice.SECTOR / 8; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            dst.putLong(x);
        }
    }

    /** Decodes the sector at {@code src}'s position (advancing it by 512) into a token. */
    public static long decode(ByteBuffer src) {
        int start = src.position();
        long first = src.getLong(start);
        long second = src.getLong(start + 8);
        long result;
        if (first == 0 && second == 0) {
            result = ZERO;
            for (int i = 16; i < BlockDevice.SECTOR; i += 8) {
                if (src.getLong(start + i) != 0) {
                    result = GARBAGE;
                    break;
                }
            }
        } else if (second != ~first || first <= 0) {
            result = GARBAGE;
        } else {
            result = first;
            long x = first * 0x9E3779B97F4A7C15L + 1;
            for (int i = 16; i < BlockDevice.SECTOR; i += 8) {
                x ^= x << 13;
                x ^= x >>> 7;
                x ^= x << 17;
                if (src.getLong(start + i) != x) {
                    result = GARBAGE;
                    break;
                }
            }
        }
        src.position(start + BlockDevice.SECTOR);
        return result;
    }
}
