package dev.strata.testsupport.crash;

import dev.strata.api.BlockDevice;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * The on-disk format of a {@code logwrites} log device, and its reader. All integers big-endian;
 * the log device is addressed in 512-byte sectors.
 *
 * <pre>
 * sector 0: superblock
 *   0  u64  magic  0x53544C4F47575231 ("STLOGWR1")
 *   8  u32  version (1)
 *  12  u32  logical block size of the recorded device
 *  16  u64  size of the recorded device in bytes
 *  24  u64  log id (random per format; every entry repeats it)
 *  32  u32  CRC32C of bytes [0, 32)
 * sector 1…: entries, back to back; each is one header sector, then (WRITE only) its data
 *   0  u64  magic  0x4C57454E54525931 ("LWENTRY1")
 *   8  u64  log id
 *  16  u64  index: 0, 1, 2, … within this log
 *  24  u64  seq: global completion order (shared by the logs of one JVM, to merge several logs)
 *  32  u32  kind: 1 WRITE, 2 ZERO, 3 DISCARD, 4 FLUSH
 *  36  u32  flags: 1 = FUA
 *  40  u64  offset (bytes)
 *  48  u64  length (bytes; WRITE: that many data bytes follow)
 *  56  u64  covers (FLUSH: the seq when flush was called; writes of this log with smaller seq are durable)
 *  64  u32  CRC32C of the data (WRITE), else 0
 *  68  u32  CRC32C of header bytes [0, 68)
 * </pre>
 * The log ends at the first header with a wrong magic, log id, index or CRC (or at the end of
 * the device). The {@code logwrites} target writes it; this class reads it back.
 */
public final class LogFormat {
    public static final long SUPER_MAGIC = 0x53544C4F47575231L;
    public static final long ENTRY_MAGIC = 0x4C57454E54525931L;
    public static final int VERSION = 1;
    public static final int SECTOR = BlockDevice.SECTOR;

    private LogFormat() {
    }

    /** What a log holds: the recorded device's geometry and its entries. */
    public record Recording(long deviceSize, int blockSize, long logId, List<LogEntry> entries) {
    }

    /** Encodes a superblock into a 512-byte buffer. */
    public static ByteBuffer superblock(long deviceSize, int blockSize, long logId) {
        ByteBuffer b = ByteBuffer.allocate(SECTOR);
        b.putLong(0, SUPER_MAGIC).putInt(8, VERSION).putInt(12, blockSize).putLong(16, deviceSize).putLong(24, logId);
        b.putInt(32, crc(b, 0, 32));
        return b;
    }

    /** Encodes an entry header into a 512-byte buffer. */
    public static ByteBuffer header(long logId, long index, LogEntry e) {
        ByteBuffer b = ByteBuffer.allocate(SECTOR);
        b.putLong(0, ENTRY_MAGIC).putLong(8, logId).putLong(16, index).putLong(24, e.seq())
                .putInt(32, e.kind().code).putInt(36, e.fua() ? 1 : 0).putLong(40, e.offset()).putLong(48, e.length())
                .putLong(56, e.covers()).putInt(64, e.data() == null ? 0 : crc(ByteBuffer.wrap(e.data()), 0, e.data().length));
        b.putInt(68, crc(b, 0, 68));
        return b;
    }

    /**
     * Reads a whole recording from {@code log}; the entries get {@code device} as their device
     * number.
     *
     * @throws IOException if the superblock is missing or damaged
     */
    public static Recording read(BlockDevice log, int device) throws IOException {
        ByteBuffer sb = ByteBuffer.allocate(SECTOR);
        log.read(0, sb);
        if (sb.getLong(0) != SUPER_MAGIC || sb.getInt(32) != crc(sb, 0, 32) || sb.getInt(8) != VERSION) {
            throw new IOException("not a logwrites log (bad superblock) on " + log);
        }
        int blockSize = sb.getInt(12);
        long deviceSize = sb.getLong(16);
        long logId = sb.getLong(24);
        List<LogEntry> entries = new ArrayList<>();
        long pos = SECTOR;
        ByteBuffer h = ByteBuffer.allocate(SECTOR);
        for (long index = 0; pos + SECTOR <= log.size(); index++) {
            h.clear();
            log.read(pos, h);
            if (h.getLong(0) != ENTRY_MAGIC || h.getLong(8) != logId || h.getLong(16) != index || h.getInt(68) != crc(h, 0, 68)) {
                break;
            }
            LogEntry.Kind kind = LogEntry.Kind.of(h.getInt(32));
            long length = h.getLong(48);
            if (kind == null || length < 0 || length % SECTOR != 0) {
                break;
            }
            byte[] data = null;
            pos += SECTOR;
            if (kind == LogEntry.Kind.WRITE) {
                if (pos + length > log.size() || length > Integer.MAX_VALUE) {
                    break;
                }
                data = new byte[(int) length];
                log.read(pos, ByteBuffer.wrap(data));
                if (crc(ByteBuffer.wrap(data), 0, data.length) != h.getInt(64)) {
                    break;
                }
                pos += length;
            }
            entries.add(new LogEntry(h.getLong(24), device, kind, (h.getInt(36) & 1) != 0, h.getLong(40), length, h.getLong(56), data));
        }
        return new Recording(deviceSize, blockSize, logId, entries);
    }

    private static int crc(ByteBuffer b, int from, int to) {
        CRC32C c = new CRC32C();
        ByteBuffer d = b.duplicate();
        d.limit(to).position(from);
        c.update(d);
        return (int) c.getValue();
    }
}
