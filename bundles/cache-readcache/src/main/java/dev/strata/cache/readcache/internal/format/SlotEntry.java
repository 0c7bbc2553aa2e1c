package dev.strata.cache.readcache.internal.format;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * One slot's metadata entry: 16 bytes, 256 to a 4096-byte metadata block, slot {@code s} at
 * byte {@code (s % 256) * 16} of metadata block {@code s / 256}. Little-endian.
 *
 * <pre>
 * offset size field
 *      0    8 origin block + 1 (0: the slot holds nothing valid)
 *      8    4 sequence of the metadata write that wrote it (low 32 bits)
 *     12    4 CRC32C of bytes [0, 12) of the entry, then the slot number (8 bytes, LE), then
 *             the cache's UUID hash (8 bytes, LE)
 * </pre>
 *
 * The CRC covers the slot number and the cache's identity, so an entry read from the wrong place
 * or left over from an earlier format of the device never decodes. Every entry carries a CRC,
 * empty ones too, so that any flipped byte of the metadata area is detected. CRC32C detects every
 * error burst of up to 32 bits, so every single flipped byte of an entry is caught. An entry is
 * within one 512-byte sector: a torn metadata write leaves each entry either old or new.
 */
public final class SlotEntry {
    /** {@link #decode}: the entry holds nothing. */
    public static final long EMPTY = -1;
    /** {@link #decode}: the entry does not check out (dropped, never served). */
    public static final long CORRUPT = -2;
    /** Highest origin block number an entry can hold. */
    public static final long MAX_BLOCK = Long.MAX_VALUE - 1;

    private SlotEntry() {
    }

    /**
     * Writes the entry of {@code slot} into {@code block} (a metadata block, absolute indices,
     * any byte order): {@code key} ≥ 0 is a valid origin block, {@link #EMPTY} an empty entry.
     */
    public static void encode(ByteBuffer block, int slot, long key, int seq, long uuidHash) {
        ByteBuffer b = block.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int at = (slot % Layout.ENTRIES_PER_BLOCK) * Layout.ENTRY;
        b.putLong(at, key < 0 ? 0 : key + 1);
        b.putInt(at + 8, seq);
        b.putInt(at + 12, crc(b, at, slot, uuidHash));
    }

    /** The origin block held by {@code slot}'s entry in {@code block}, {@link #EMPTY} or {@link #CORRUPT}. */
    public static long decode(ByteBuffer block, int slot, long uuidHash) {
        ByteBuffer b = block.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int at = (slot % Layout.ENTRIES_PER_BLOCK) * Layout.ENTRY;
        if (b.getInt(at + 12) != crc(b, at, slot, uuidHash)) {
            return CORRUPT;
        }
        long k = b.getLong(at);
        return k == 0 ? EMPTY : k < 0 ? CORRUPT : k - 1;
    }

    /** The sequence field of {@code slot}'s entry (meaningful only if it decodes). */
    public static int seq(ByteBuffer block, int slot) {
        return block.duplicate().order(ByteOrder.LITTLE_ENDIAN).getInt((slot % Layout.ENTRIES_PER_BLOCK) * Layout.ENTRY + 8);
    }

    private static int crc(ByteBuffer b, int at, long slot, long uuidHash) {
        byte[] x = new byte[28];
        ByteBuffer w = ByteBuffer.wrap(x).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < 12; i++) {
            x[i] = b.get(at + i);
        }
        w.putLong(12, slot);
        w.putLong(20, uuidHash);
        CRC32C c = new CRC32C();
        c.update(x);
        return (int) c.getValue();
    }
}
