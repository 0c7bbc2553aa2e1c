package dev.strata.mirror.internal.log;

import dev.strata.api.BlockDevice;
import dev.strata.api.InvalidArgumentException;
import dev.strata.mirror.internal.format.FormatException;
import dev.strata.mirror.internal.format.LogHeader;
import dev.strata.mirror.internal.format.LogLayout;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.BitSet;

/**
 * The {@code disk:DEV} log: two alternating headers and a bitmap on a device (layout in
 * {@link LogLayout}). A commit writes the span of bitmap sectors that changed as one FUA write:
 * one round trip however many marks and clears it carries.
 */
public final class DiskLog implements RegionLog {
    private final String name;
    private final BlockDevice device;
    private final long legsId;
    private byte[] bitmap;
    private LogHeader header;
    private volatile long roundTrips;

    public DiskLog(String name, BlockDevice device) {
        this(name, device, 0);
    }

    /** @param legsId {@link LogHeader#legsId} of the legs, recorded in a new log and checked in an old one (0: unknown) */
    public DiskLog(String name, BlockDevice device, long legsId) {
        this.name = name;
        this.device = device;
        this.legsId = legsId;
    }

    @Override
    public String describe() {
        return "disk:" + name;
    }

    @Override
    public boolean persistent() {
        return true;
    }

    @Override
    public Opened open(int legs, long regionSize, long regions, boolean syncNew) throws IOException {
        if (device.size() < LogLayout.deviceBytes(regions)) {
            throw new InvalidArgumentException("mirror: log device '" + name + "' holds " + device.size() + " bytes; "
                    + regions + " regions need at least " + LogLayout.deviceBytes(regions));
        }
        ByteBuffer a = ByteBuffer.allocate(LogLayout.HEADER_SIZE);
        ByteBuffer b = ByteBuffer.allocate(LogLayout.HEADER_SIZE);
        device.read(LogLayout.HEADER_A, a);
        device.read(LogLayout.HEADER_B, b);
        bitmap = new byte[Math.toIntExact(LogLayout.bitmapBytes(regions))];
        if (LogHeader.isBlank(a) && LogHeader.isBlank(b)) {
            BitSet dirty = new BitSet();
            if (syncNew) {
                dirty.set(0, Math.toIntExact(regions));
                byte[] ones = dirty.toByteArray();
                System.arraycopy(ones, 0, bitmap, 0, ones.length);
            }
            // bitmap before header: a power cut in between leaves a blank header, so the next open
            // formats again instead of trusting a bitmap that was never written
            device.write(LogLayout.BITMAP_OFFSET, ByteBuffer.wrap(bitmap), BlockDevice.FUA);
            header = new LogHeader(legs, regionSize, regions, 0, (1 << legs) - 1, legsId);
            writeHeader(header.withSequence(1));
            roundTrips = 0; // formatting is not a round trip of the mirror's I/O
            return new Opened(dirty, header.inSyncMask(), true);
        }
        LogHeader h = newest(a, b);
        if (h.legs() != legs || h.regionSize() != regionSize || h.regions() != regions) {
            throw new InvalidArgumentException("mirror: log device '" + name + "' belongs to a mirror of " + h.legs() + " legs, region_size="
                    + h.regionSize() + ", " + h.regions() + " regions; give the same legs and region_size, or wipe the log device");
        }
        if (h.legsId() != 0 && legsId != 0 && h.legsId() != legsId) {
            throw new InvalidArgumentException("mirror: log device '" + name + "' belongs to other legs (their device identities differ);"
                    + " give the legs it was made with, in the same order, or wipe the log device");
        }
        header = h;
        device.read(LogLayout.BITMAP_OFFSET, ByteBuffer.wrap(bitmap));
        BitSet dirty = BitSet.valueOf(bitmap);
        if (dirty.length() > regions) {
            dirty.clear((int) regions, dirty.length());
        }
        return new Opened(dirty, h.inSyncMask(), false);
    }

    private LogHeader newest(ByteBuffer a, ByteBuffer b) {
        LogHeader ha = null;
        LogHeader hb = null;
        String why = null;
        try {
            ha = LogHeader.decode(a);
        } catch (FormatException e) {
            why = e.getMessage();
        }
        try {
            hb = LogHeader.decode(b);
        } catch (FormatException e) {
            why = e.getMessage();
        }
        if (ha == null && hb == null) {
            throw new InvalidArgumentException("mirror: log device '" + name + "' is not a mirror log (" + why
                    + "); give a blank device or wipe it");
        }
        if (ha == null) {
            return hb;
        }
        if (hb == null) {
            return ha;
        }
        return ha.sequence() >= hb.sequence() ? ha : hb;
    }

    @Override
    public void commit(BitSet marks, BitSet clears) throws IOException {
        int lo = Integer.MAX_VALUE;
        int hi = -1;
        for (int r = marks.nextSetBit(0); r >= 0; r = marks.nextSetBit(r + 1)) {
            bitmap[r >>> 3] |= (byte) (1 << (r & 7));
            lo = Math.min(lo, r >>> 3);
            hi = Math.max(hi, r >>> 3);
        }
        for (int r = clears.nextSetBit(0); r >= 0; r = clears.nextSetBit(r + 1)) {
            bitmap[r >>> 3] &= (byte) ~(1 << (r & 7));
            lo = Math.min(lo, r >>> 3);
            hi = Math.max(hi, r >>> 3);
        }
        if (hi < 0) {
            return;
        }
        int from = lo / LogLayout.BITMAP_SECTOR * LogLayout.BITMAP_SECTOR;
        int to = (hi / LogLayout.BITMAP_SECTOR + 1) * LogLayout.BITMAP_SECTOR;
        roundTrips++;
        device.write(LogLayout.BITMAP_OFFSET + from, ByteBuffer.wrap(bitmap, from, to - from).slice(), BlockDevice.FUA);
    }

    @Override
    public void flushRequest() throws IOException {
        roundTrips++;
        device.flush();
    }

    @Override
    public void writeLegState(int inSyncMask) throws IOException {
        if (inSyncMask == header.inSyncMask()) {
            return;
        }
        writeHeader(header.withInSyncMask(inSyncMask).withSequence(header.sequence() + 1));
    }

    private void writeHeader(LogHeader h) throws IOException {
        roundTrips++;
        // odd sequences go to copy A, even ones to B: the copy being overwritten is never the newest
        device.write((h.sequence() & 1) == 1 ? LogLayout.HEADER_A : LogLayout.HEADER_B, h.encode(), BlockDevice.FUA);
        header = h;
    }

    @Override
    public long roundTrips() {
        return roundTrips;
    }
}
