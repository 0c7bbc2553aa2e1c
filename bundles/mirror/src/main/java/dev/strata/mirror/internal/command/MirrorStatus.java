package dev.strata.mirror.internal.command;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A mirror's status as the commands read it: the key/values of {@code DeviceManager.status}
 * (the device's own keys, then the mirror target's), with the legs picked out in order.
 */
record MirrorStatus(String device, Map<String, String> keys, Map<String, String> legs) {
    static final String LEG = "leg.";

    static MirrorStatus of(String device, Map<String, String> status) {
        Map<String, String> legs = new LinkedHashMap<>();
        status.forEach((k, v) -> {
            if (k.startsWith(LEG)) {
                legs.put(k.substring(LEG.length()), v);
            }
        });
        return new MirrorStatus(device, Map.copyOf(status), legs);
    }

    String get(String key) {
        return keys.getOrDefault(key, "");
    }

    long number(String key) {
        try {
            return Long.parseLong(get(key));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** Legs in {@code state} ({@code in_sync}, {@code recovering}, {@code out_of_sync}). */
    List<String> legsIn(String state) {
        List<String> out = new ArrayList<>();
        legs.forEach((n, s) -> {
            if (s.equals(state)) {
                out.add(n);
            }
        });
        return out;
    }

    /** Whether copying is under way or owed: regions pending, or a leg recovering. */
    boolean resyncing() {
        return number("resync_pending") > 0 || !legsIn("recovering").isEmpty();
    }
}
