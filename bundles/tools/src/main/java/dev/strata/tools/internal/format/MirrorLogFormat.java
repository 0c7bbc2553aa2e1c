package dev.strata.tools.internal.format;

import dev.strata.api.BlockDevice;
import dev.strata.mirror.internal.format.FormatException;
import dev.strata.mirror.internal.format.LogHeader;
import dev.strata.mirror.internal.format.LogLayout;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The mirror's {@code disk:} region log: two header copies (decoded by the mirror's own
 * {@link LogHeader}) and a bitmap. The newer valid copy is the one the mirror uses; a copy with
 * one damaged byte would make it fall back to the older copy — an older in-sync mask — so it is
 * a problem, and corrected. A copy that is not one byte from valid is a torn header write, which
 * the format allows (the other copy, one state older, is used). The bitmap has no checksum by
 * design (every bit is independent and either value of a torn sector is safe): it is reported,
 * not checked. A log holds no data, so there is nothing to write back.
 */
public final class MirrorLogFormat implements CacheFormat {
    @Override
    public String name() {
        return "mirror-log";
    }

    @Override
    public boolean holdsDirtyData() {
        return false;
    }

    @Override
    public Findings scan(BlockDevice log, Hints hints) throws IOException {
        Findings f = new Findings(new Overlay(log));
        header(f);
        return f;
    }

    /** The header's bytes that are always zero. */
    private static final int[] ZEROS = {52, LogHeader.CRC_OFFSET};

    private static LogHeader decodeOrNull(byte[] b) {
        try {
            return LogHeader.decode(ByteBuffer.wrap(b));
        } catch (FormatException e) {
            return null;
        }
    }

    private static LogHeader copy(Findings f, String which, long offset) throws IOException {
        byte[] b = f.read(offset, LogLayout.HEADER_SIZE);
        LogHeader h = decodeOrNull(b);
        if (h != null || LogHeader.isBlank(ByteBuffer.wrap(b))) {
            return h;
        }
        String fix = Mend.mend(b, LogLayout.HEADER_SIZE, LogHeader.MAGIC, ZEROS, 0, LogHeader.CRC_OFFSET,
                LogHeader.CRC_OFFSET, w -> decodeOrNull(w) != null);
        if (fix == null) {
            return null; // a torn header write: the format's fallback is the other copy
        }
        f.overlay().patch(offset, b);
        f.corrected("header copy " + which + ": " + fix + " is damaged (the mirror would use the other, older copy)",
                "header copy " + which + " " + fix + " restored");
        return decodeOrNull(b);
    }

    private static LogHeader header(Findings f) throws IOException {
        if (f.overlay().size() < 2L * LogLayout.HEADER_SIZE) {
            f.fatal("the device is smaller than a mirror log's two header blocks");
            return null;
        }
        byte[] a = f.read(LogLayout.HEADER_A, LogLayout.HEADER_SIZE);
        byte[] b = f.read(LogLayout.HEADER_B, LogLayout.HEADER_SIZE);
        if (LogHeader.isBlank(ByteBuffer.wrap(a)) && LogHeader.isBlank(ByteBuffer.wrap(b))) {
            f.fatal("header: the device is blank (never formatted; the mirror formats it at its first start)");
            return null;
        }
        LogHeader ha = copy(f, "A", LogLayout.HEADER_A);
        LogHeader hb = copy(f, "B", LogLayout.HEADER_B);
        if (ha == null && hb == null) {
            f.fatal("header: neither copy is an intact mirror log header, and which legs hold every write is kept only there,"
                    + " so it cannot be rebuilt: if every leg is known to be current, zero the log device's first 8 KiB"
                    + " (the mirror formats it at its next start and resyncs every region from the first leg), else copy"
                    + " the good leg over the others first");
            return null;
        }
        LogHeader h = ha == null ? hb : hb == null ? ha : ha.sequence() >= hb.sequence() ? ha : hb;
        if (LogLayout.deviceBytes(h.regions()) > f.overlay().size()) {
            f.fatal("header: " + h.regions() + " regions need " + LogLayout.deviceBytes(h.regions())
                    + " bytes but the device has " + f.overlay().size());
        }
        return h;
    }

    @Override
    public Map<String, Object> dump(BlockDevice log, Findings ignored) throws IOException {
        Findings f = new Findings(new Overlay(log));
        LogHeader h = header(f);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("policy", name());
        if (h != null && f.unrepairable() == null) {
            m.put("legs", h.legs());
            m.put("region_size", h.regionSize());
            m.put("regions", h.regions());
            m.put("sequence", h.sequence());
            List<Object> inSync = new ArrayList<>();
            for (int i = 0; i < h.legs(); i++) {
                inSync.add(h.inSync(i));
            }
            m.put("in_sync", inSync);
            m.put("legs_id", Long.toUnsignedString(h.legsId(), 16));
            byte[] bitmap = f.read(LogLayout.BITMAP_OFFSET, Math.toIntExact(LogLayout.bitmapBytes(h.regions())));
            BitSet dirty = BitSet.valueOf(bitmap);
            if (dirty.length() > h.regions()) {
                dirty.clear((int) h.regions(), dirty.length());
            }
            m.put("dirty_regions", (long) dirty.cardinality());
            List<Object> runs = new ArrayList<>();
            for (int r = dirty.nextSetBit(0); r >= 0 && runs.size() < 1000; ) {
                int end = dirty.nextClearBit(r);
                runs.add(end - r == 1 ? Integer.toString(r) : r + ".." + (end - 1));
                r = dirty.nextSetBit(end);
            }
            m.put("dirty", runs);
        }
        m.put("problems", f.problems());
        return m;
    }
}
