package dev.strata.core.internal.command;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.strata.api.DeviceInfo;
import dev.strata.core.internal.text.Text;

/**
 * {@code dev:list --tree}: every stack drawn from its top device down to its leaves, each lower
 * device under the device that uses it, with the argument that names it there ({@code backing},
 * {@code cache}, {@code origin}, …) so that a stack such as writeboost over readcache over an
 * {@code nbd} import reads at a glance. A device under two others (a shared window) is drawn under
 * each; what is not a device's holder (exports, handles) is listed with the device.
 */
final class Tree {
    private Tree() {
    }

    static String render(List<DeviceInfo> devices, boolean bytes) {
        if (devices.isEmpty()) {
            return Render.devices(devices, bytes);
        }
        Map<String, DeviceInfo> byName = new LinkedHashMap<>();
        for (DeviceInfo d : devices) {
            byName.put(d.name(), d);
        }
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"DEVICE", "AS", "TYPE", "SIZE", "STATE", "EXPORTS", "WHY"});
        for (DeviceInfo d : devices) {
            if (d.holders().stream().noneMatch(byName::containsKey)) {
                draw(d, "", "", "", byName, bytes, rows, new HashSet<>());
            }
        }
        return Render.table(rows);
    }

    /** One device's row, then its lower devices' below it ({@code seen}: the path, against a cycle). */
    private static void draw(DeviceInfo d, String lead, String branch, String as, Map<String, DeviceInfo> byName,
            boolean bytes, List<String[]> rows, Set<String> seen) {
        List<String> exports = d.holders().stream().filter(h -> !byName.containsKey(h)).toList();
        rows.add(new String[] {lead + branch + d.name(), as.isEmpty() ? "-" : as, d.type(),
            d.size() == 0 ? "-" : bytes ? Long.toString(d.size()) : Text.size(d.size()),
            Render.state(d) + (d.persistent() ? "" : " (transient)"),
            exports.isEmpty() ? "-" : String.join(", ", exports), d.waitingFor() == null ? "-" : d.waitingFor()});
        if (!seen.add(d.name())) {
            return;
        }
        String next = lead + (branch.isEmpty() ? "" : branch.startsWith("└") ? "   " : "│  ");
        List<String> lower = d.lower();
        for (int i = 0; i < lower.size(); i++) {
            DeviceInfo l = byName.get(lower.get(i));
            if (l != null) {
                draw(l, next, i == lower.size() - 1 ? "└─ " : "├─ ", role(d, l.name()), byName, bytes, rows, seen);
            }
        }
        seen.remove(d.name());
    }

    /** The argument keys of {@code upper} whose value names {@code lower}. */
    private static String role(DeviceInfo upper, String lower) {
        List<String> keys = new ArrayList<>();
        upper.arguments().forEach((k, v) -> {
            if (v.equals(lower) || List.of(v.split(",")).contains(lower)) {
                keys.add(k);
            }
        });
        return String.join(",", keys);
    }
}
