package dev.strata.mirror.internal.log.zk;

import dev.strata.api.InvalidArgumentException;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The znodes of a {@code zookeeper:} log (docs/formats/mirror-log.md): pure names and bytes, no
 * I/O.
 *
 * <pre>
 * PATH/geometry            persistent  "strata-mirror-log 1\nlegs=…\nregion_size=…\nregions=…\nlegs_id=…\n"
 * PATH/legs                persistent  "in_sync_mask=N\n"
 * PATH/members/NODE        ephemeral   a live node (or "recovering-by=OTHER" while OTHER takes it over)
 * PATH/recoverer           ephemeral   the one node recovering dead nodes now
 * PATH/nodes/NODE          persistent  the node's fencing token (its version); "node=NODE\n"
 * PATH/nodes/NODE/c-NNNNNN persistent  a chunk of the node's marks: CHUNK_REGIONS bits, LSB first
 * </pre>
 */
public final class ZnodeLayout {
    /** Regions per mark chunk: 4 KiB of bitmap, so a 1 TiB mirror of 512 KiB regions has 64 chunks per node. */
    public static final int CHUNK_REGIONS = 32768;
    static final String MAGIC = "strata-mirror-log 1";

    final String root;

    ZnodeLayout(String root) {
        this.root = root;
    }

    String geometry() {
        return root + "/geometry";
    }

    String legs() {
        return root + "/legs";
    }

    String members() {
        return root + "/members";
    }

    String member(String node) {
        return members() + "/" + node;
    }

    String recoverer() {
        return root + "/recoverer";
    }

    String nodes() {
        return root + "/nodes";
    }

    String node(String node) {
        return nodes() + "/" + node;
    }

    String chunk(String node, int chunk) {
        return String.format("%s/c-%06d", node(node), chunk);
    }

    static int chunks(long regions) {
        return (int) ((regions + CHUNK_REGIONS - 1) / CHUNK_REGIONS);
    }

    /** The bytes of chunk {@code c} of {@code marks} (the last chunk is as long as its regions need). */
    static byte[] chunkBytes(BitSet marks, int c, long regions) {
        int from = c * CHUNK_REGIONS;
        int n = (int) Math.min(CHUNK_REGIONS, regions - from);
        byte[] out = new byte[(n + 7) / 8];
        for (int r = marks.nextSetBit(from); r >= 0 && r < from + n; r = marks.nextSetBit(r + 1)) {
            int i = r - from;
            out[i >>> 3] |= (byte) (1 << (i & 7));
        }
        return out;
    }

    /** Sets in {@code into} the marks chunk {@code c} holds. */
    static void readChunk(byte[] data, int c, long regions, BitSet into) {
        int from = c * CHUNK_REGIONS;
        int n = (int) Math.min(CHUNK_REGIONS, regions - from);
        for (int i = 0; i < n && (i >>> 3) < data.length; i++) {
            if ((data[i >>> 3] & (1 << (i & 7))) != 0) {
                into.set(from + i);
            }
        }
    }

    static int chunkOf(int region) {
        return region / CHUNK_REGIONS;
    }

    static byte[] geometryBytes(int legs, long regionSize, long regions, long legsId) {
        return (MAGIC + "\nlegs=" + legs + "\nregion_size=" + regionSize + "\nregions=" + regions + "\nlegs_id=" + legsId + "\n")
                .getBytes(StandardCharsets.UTF_8);
    }

    /** The fields of a geometry znode, or {@code null} if it is not one. */
    static Map<String, Long> parseGeometry(byte[] data) {
        String[] lines = new String(data == null ? new byte[0] : data, StandardCharsets.UTF_8).split("\n");
        if (lines.length < 1 || !lines[0].equals(MAGIC)) {
            return null;
        }
        Map<String, Long> m = new LinkedHashMap<>();
        for (String l : Arrays.copyOfRange(lines, 1, lines.length)) {
            int eq = l.indexOf('=');
            if (eq <= 0) {
                return null;
            }
            try {
                m.put(l.substring(0, eq), Long.parseLong(l.substring(eq + 1)));
            } catch (NumberFormatException e) {
                return null;
            }
        }
        return m.keySet().containsAll(java.util.List.of("legs", "region_size", "regions", "legs_id")) ? m : null;
    }

    static byte[] legsBytes(int inSyncMask) {
        return ("in_sync_mask=" + inSyncMask + "\n").getBytes(StandardCharsets.UTF_8);
    }

    /** The in-sync mask of a legs znode, or -1 if it is not one. */
    static int parseLegs(byte[] data) {
        String s = new String(data == null ? new byte[0] : data, StandardCharsets.UTF_8).trim();
        if (!s.startsWith("in_sync_mask=")) {
            return -1;
        }
        try {
            return Integer.parseInt(s.substring("in_sync_mask=".length()));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    static byte[] text(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Refuses, with one line, a geometry znode ({@code have}, at {@code path}) that is not a mirror
     * log's or is another mirror's than the one being opened ({@code where} names the log).
     */
    static void checkGeometry(byte[] have, String path, String where, int legs, long regionSize, long regions,
            long legsId) {
        Map<String, Long> g = parseGeometry(have);
        if (g == null) {
            throw new InvalidArgumentException("mirror: " + path + " is not a mirror log; give another path or remove it");
        }
        if (g.get("legs") != legs || g.get("region_size") != regionSize || g.get("regions") != regions) {
            throw new InvalidArgumentException("mirror: the log at " + where + " belongs to a mirror of " + g.get("legs")
                    + " legs, region_size=" + g.get("region_size") + ", " + g.get("regions")
                    + " regions; give the same legs and region_size, or another path");
        }
        long id = g.get("legs_id");
        if (id != 0 && legsId != 0 && id != legsId) {
            throw new InvalidArgumentException("mirror: the log at " + where + " belongs to other legs (their device identities"
                    + " differ); give the legs it was made with, in the same order, or another path");
        }
    }
}
