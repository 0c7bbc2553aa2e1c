package dev.strata.mirror.internal.log.zk;

import dev.strata.api.InvalidArgumentException;
import dev.strata.mirror.internal.log.RegionLog;

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
 * PATH/legs                persistent  "in_sync_mask=N\nrecovering_mask=M\nepoch=E\n" (shared by the nodes, watched)
 * PATH/members/NODE        ephemeral   a live node, "node=NODE\n[recovered_epoch=E\n]" (or "recovering-by=OTHER")
 * PATH/recoverer           ephemeral   the one node recovering dead nodes now
 * PATH/recovering          persistent  regions being resynced, per node: "NODE=A-B,C,…\n" (watched; its version is checked by commits)
 * PATH/acks/NODE           ephemeral   "version=V\n": NODE holds back its writes to the regions of PATH/recovering version V
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

    /** Every znode above the log's own (the path's segments) and the two parents of its children, top down. */
    java.util.List<String> parents() {
        java.util.List<String> out = new java.util.ArrayList<>();
        StringBuilder b = new StringBuilder();
        for (String s : root.substring(1).split("/")) {
            out.add(b.append('/').append(s).toString());
        }
        out.add(members());
        out.add(nodes());
        out.add(acks());
        return out;
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

    String recovering() {
        return root + "/recovering";
    }

    String acks() {
        return root + "/acks";
    }

    String ack(String node) {
        return acks() + "/" + node;
    }

    /** Beyond this the regions of an entry are published as one covering range (a superset: safe, only more writes wait). */
    static final int RECOVERING_BUDGET = 256 * 1024;

    /**
     * {@code PATH/recovering}: one line per node resyncing, {@code NODE=A-B,C,…} (ascending
     * region ranges, inclusive). An entry too long for {@link #RECOVERING_BUDGET} is written as the
     * one range from its first to its last region.
     */
    static byte[] recoveringBytes(Map<String, BitSet> entries) {
        StringBuilder b = new StringBuilder();
        for (Map.Entry<String, BitSet> e : new java.util.TreeMap<>(entries).entrySet()) {
            BitSet s = e.getValue();
            if (s.isEmpty()) {
                continue;
            }
            StringBuilder line = new StringBuilder(e.getKey()).append('=');
            for (int r = s.nextSetBit(0); r >= 0; ) {
                int end = s.nextClearBit(r) - 1;
                if (line.charAt(line.length() - 1) != '=') {
                    line.append(',');
                }
                line.append(r);
                if (end > r) {
                    line.append('-').append(end);
                }
                r = s.nextSetBit(end + 1);
            }
            if (line.length() > RECOVERING_BUDGET) {
                line = new StringBuilder(e.getKey()).append('=').append(s.nextSetBit(0)).append('-').append(s.length() - 1);
            }
            b.append(line).append('\n');
        }
        return b.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** The entries of {@code PATH/recovering} (empty for an empty znode); lines that are not entries are skipped. */
    static Map<String, BitSet> parseRecovering(byte[] data) {
        Map<String, BitSet> out = new java.util.TreeMap<>();
        for (String l : new String(data == null ? new byte[0] : data, StandardCharsets.UTF_8).split("\n")) {
            int eq = l.indexOf('=');
            if (eq <= 0) {
                continue;
            }
            BitSet s = new BitSet();
            try {
                for (String range : l.substring(eq + 1).split(",")) {
                    if (range.isEmpty()) {
                        continue;
                    }
                    int dash = range.indexOf('-');
                    int from = Integer.parseInt(dash < 0 ? range : range.substring(0, dash));
                    int to = dash < 0 ? from : Integer.parseInt(range.substring(dash + 1));
                    s.set(from, to + 1);
                }
            } catch (NumberFormatException | IndexOutOfBoundsException e) {
                continue;
            }
            out.put(l.substring(0, eq), s);
        }
        return out;
    }

    static byte[] ackBytes(long version) {
        return ("version=" + version + "\n").getBytes(StandardCharsets.UTF_8);
    }

    /** The version an ack znode holds, -1 if none. */
    static long parseAck(byte[] data) {
        String s = new String(data == null ? new byte[0] : data, StandardCharsets.UTF_8).trim();
        if (!s.startsWith("version=")) {
            return -1;
        }
        try {
            return Long.parseLong(s.substring("version=".length()).trim());
        } catch (NumberFormatException e) {
            return -1;
        }
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
        return legsBytes(new RegionLog.LegShare(inSyncMask, 0, 0));
    }

    static byte[] legsBytes(RegionLog.LegShare s) {
        return ("in_sync_mask=" + s.inSync() + "\nrecovering_mask=" + s.recovering() + "\nepoch=" + s.epoch() + "\n")
                .getBytes(StandardCharsets.UTF_8);
    }

    /** The in-sync mask of a legs znode, or -1 if it is not one. */
    static int parseLegs(byte[] data) {
        RegionLog.LegShare s = parseLegShare(data);
        return s == null ? -1 : s.inSync();
    }

    /**
     * A legs znode: {@code in_sync_mask=N}, then (since the leg state is shared with running
     * nodes) {@code recovering_mask=M} and {@code epoch=E}; a znode of one line is an older log's
     * (nothing recovering). {@code null} if it is not one.
     */
    static RegionLog.LegShare parseLegShare(byte[] data) {
        String[] lines = new String(data == null ? new byte[0] : data, StandardCharsets.UTF_8).trim().split("\n");
        Map<String, Long> m = new LinkedHashMap<>();
        for (String l : lines) {
            int eq = l.indexOf('=');
            if (eq <= 0) {
                return null;
            }
            try {
                m.put(l.substring(0, eq), Long.parseLong(l.substring(eq + 1).trim()));
            } catch (NumberFormatException e) {
                return null;
            }
        }
        if (!lines[0].startsWith("in_sync_mask=")) {
            return null;
        }
        return new RegionLog.LegShare(m.get("in_sync_mask").intValue(), m.getOrDefault("recovering_mask", 0L).intValue(),
                m.getOrDefault("epoch", 0L));
    }

    /** A member znode's data: the node's name and the last recovery epoch it has copied its marks for (-1: none). */
    static byte[] memberBytes(String node, long ackedEpoch) {
        return ("node=" + node + "\n" + (ackedEpoch >= 0 ? "recovered_epoch=" + ackedEpoch + "\n" : "")).getBytes(StandardCharsets.UTF_8);
    }

    /** The epoch a live member acknowledged, -1 for none, or {@link Long#MIN_VALUE} if the member is a recoverer's placeholder. */
    static long memberEpoch(byte[] data) {
        String s = new String(data == null ? new byte[0] : data, StandardCharsets.UTF_8);
        if (!s.startsWith("node=")) {
            return Long.MIN_VALUE;
        }
        int at = s.indexOf("recovered_epoch=");
        if (at < 0) {
            return -1;
        }
        int end = s.indexOf('\n', at);
        try {
            return Long.parseLong(s.substring(at + "recovered_epoch=".length(), end < 0 ? s.length() : end).trim());
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
