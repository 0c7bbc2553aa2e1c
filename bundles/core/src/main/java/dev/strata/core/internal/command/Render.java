package dev.strata.core.internal.command;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceManager.TargetType;
import dev.strata.core.internal.DeviceDefinition;
import dev.strata.core.internal.text.Text;

/**
 * Every text the {@code dev:} commands print, in one place; the spellings the manager's own messages
 * share with them (sizes, states) are {@link Text}'s.
 */
public final class Render {
    private Render() {
    }

    /** Rows as left-aligned columns separated by two spaces; the first row is the header. */
    public static String table(List<String[]> rows) {
        int cols = rows.get(0).length;
        int[] w = new int[cols];
        for (String[] r : rows) {
            for (int i = 0; i < cols; i++) {
                w[i] = Math.max(w[i], r[i].length());
            }
        }
        StringBuilder sb = new StringBuilder();
        for (String[] r : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < cols; i++) {
                line.append(r[i]);
                if (i < cols - 1) {
                    line.append(" ".repeat(w[i] - r[i].length() + 2));
                }
            }
            sb.append(line.toString().stripTrailing()).append('\n');
        }
        return sb.toString();
    }

    public static String devices(List<DeviceInfo> devices) {
        return devices(devices, false);
    }

    /**
     * {@code dev:list}: one row per device; sizes in IEC units, or in bytes with {@code bytes};
     * who uses a device and how ({@code wb0 (exclusive)}); why a device waits, in its own column.
     */
    public static String devices(List<DeviceInfo> devices, boolean bytes) {
        if (devices.isEmpty()) {
            return "no devices; create one with dev:create NAME TYPE key=value… (see dev:targets)\n";
        }
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"NAME", "TYPE", "SIZE", "STATE", "STACKED ON", "USED BY", "WHY"});
        for (DeviceInfo d : devices) {
            rows.add(new String[] {d.name(), d.type(), d.size() == 0 ? "-" : bytes ? Long.toString(d.size()) : Text.size(d.size()),
                state(d) + (d.persistent() ? "" : " (transient)"),
                d.lower().isEmpty() ? "-" : String.join(",", d.lower()), holders(d),
                d.waitingFor() == null ? "-" : d.waitingFor()});
        }
        return table(rows);
    }

    /** {@code wb0 (exclusive), nbd:wb0 (shared)}, or {@code -}. */
    static String holders(DeviceInfo d) {
        if (d.holders().isEmpty()) {
            return "-";
        }
        List<String> out = new ArrayList<>();
        for (String h : d.holders()) {
            dev.strata.api.Claim c = d.holderClaims() == null ? null : d.holderClaims().get(h);
            out.add(c == null ? h : h + " (" + c.label() + ")");
        }
        return String.join(", ", out);
    }

    public static String state(DeviceInfo d) {
        return Text.label(d.state());
    }

    public static String info(DeviceInfo d, DeviceDefinition def) {
        return info(d, def, false);
    }

    /** {@code dev:info}: one device, sizes in IEC units with the bytes, or bytes only with {@code bytes}. */
    public static String info(DeviceInfo d, DeviceDefinition def, boolean bytes) {
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"name", d.name()});
        rows.add(new String[] {"id", d.id() == null ? "-" : d.id()});
        rows.add(new String[] {"type", d.type()});
        rows.add(new String[] {"state", state(d)});
        if (d.waitingFor() != null) {
            rows.add(new String[] {"why", d.waitingFor()});
        }
        rows.add(new String[] {"persisted", d.persistent() ? "yes" : "no (transient: gone after a restart)"});
        rows.add(new String[] {"size", d.size() == 0 ? "- (no target)" : bytes ? Long.toString(d.size())
                : Text.size(d.size()) + " (" + d.size() + " bytes)"});
        rows.add(new String[] {"block size", bytes ? Integer.toString(d.blockSize()) : Text.size(d.blockSize())});
        rows.add(new String[] {"stacked on", d.lower().isEmpty() ? "-" : String.join(", ", d.lower())});
        rows.add(new String[] {"used by", holders(d)});
        if (!def.tunables().isEmpty()) {
            StringBuilder t = new StringBuilder();
            def.tunables().forEach((k, v) -> t.append(t.length() == 0 ? "" : " ").append(k).append('=').append(v));
            rows.add(new String[] {"tunables", t.toString()});
        }
        rows.add(new String[] {"table", def.tableLine()});
        return keyValues(rows);
    }

    public static String status(Map<String, String> status) {
        return status(status, false);
    }

    /**
     * {@code dev:status}: one key and value a line; byte-valued keys ({@code size}, {@code *_size},
     * {@code *_bytes}, {@code offset}, {@code length}, {@code *_offset}, {@code *_length}) in IEC
     * units like {@code dev:list}, or as the target reported them with {@code bytes}.
     */
    public static String status(Map<String, String> status, boolean bytes) {
        List<String[]> rows = new ArrayList<>();
        status.forEach((k, v) -> rows.add(new String[] {k, bytes ? v : statusValue(k, v)}));
        return keyValues(rows);
    }

    static String statusValue(String key, String value) {
        if (!(key.equals("size") || key.endsWith("_size") || key.endsWith("_bytes")
                || key.equals("offset") || key.equals("length") || key.endsWith("_offset") || key.endsWith("_length"))) {
            return value;
        }
        try {
            return Text.size(Long.parseLong(value));
        } catch (NumberFormatException e) {
            return value; // a target may report "-" or text under a size-like key: show it as it is
        }
    }

    private static String keyValues(List<String[]> rows) {
        int w = 0;
        for (String[] r : rows) {
            w = Math.max(w, r[0].length());
        }
        StringBuilder sb = new StringBuilder();
        for (String[] r : rows) {
            sb.append(r[0]).append(' ').append(" ".repeat(w - r[0].length() + 1)).append(r[1]).append('\n');
        }
        return sb.toString();
    }

    public static String definitions(List<DeviceDefinition> defs) {
        StringBuilder sb = new StringBuilder();
        for (DeviceDefinition d : defs) {
            sb.append(d.tableLine()).append('\n');
        }
        return sb.toString();
    }

    public static String targets(List<TargetType> types) {
        if (types.isEmpty()) {
            return "no target types; start a driver or policy bundle\n";
        }
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"TYPE", "BUNDLE", "VERSION", "USAGE"});
        for (TargetType t : types) {
            rows.add(new String[] {t.type(), t.bundle(), t.version(), t.usage()});
        }
        return table(rows);
    }

    public static String created(DeviceInfo d) {
        return "created " + d.name() + ": " + d.type() + ", " + Text.size(d.size()) + ", " + state(d)
                + (d.persistent() ? "" : " (transient: not stored, gone after a restart)") + "\n";
    }

    public static String reloaded(DeviceInfo d) {
        return "reloaded " + d.name() + ": " + d.type() + ", " + Text.size(d.size()) + ", " + state(d) + "\n";
    }
}
