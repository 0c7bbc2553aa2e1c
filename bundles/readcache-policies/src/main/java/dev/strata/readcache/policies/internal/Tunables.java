package dev.strata.readcache.policies.internal;

import dev.strata.api.InvalidArgumentException;
import java.util.Map;

/** Parsing of a policy's integer tunables, with one-line errors that give the allowed range. */
final class Tunables {
    private Tunables() {
    }

    /** {@code key} from {@code tunables}, or {@code dflt} if absent. */
    static int intValue(String policy, Map<String, String> tunables, String key, int dflt, int min, int max) {
        String v = tunables.get(key);
        return v == null ? dflt : parse(policy, key, v, min, max);
    }

    static int parse(String policy, String key, String value, int min, int max) {
        int n;
        try {
            n = Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new InvalidArgumentException(policy + ": " + key + "=" + value + " is not a whole number; use "
                    + min + " to " + max);
        }
        if (n < min || n > max) {
            throw new InvalidArgumentException(policy + ": " + key + "=" + value + " is out of range; use "
                    + min + " to " + max);
        }
        return n;
    }

    static boolean bool(String policy, String key, String value) {
        String v = value.trim();
        if (v.equals("true") || v.equals("on") || v.equals("1")) {
            return true;
        }
        if (v.equals("false") || v.equals("off") || v.equals("0")) {
            return false;
        }
        throw new InvalidArgumentException(policy + ": " + key + "=" + value + " is not a switch; use true or false");
    }

    static boolean boolValue(String policy, Map<String, String> tunables, String key, boolean dflt) {
        String v = tunables.get(key);
        return v == null ? dflt : bool(policy, key, v);
    }
}
