package dev.strata.shell.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.strata.api.CacheMode;

/**
 * What the positional words of Strata's own commands are, for completion: an explicit table, one
 * short syntax line per command, rather than a guess from each parameter's {@code @Descriptor}
 * wording (which broke when dev: commands started to take their words as one list and parse them
 * themselves). A command missing here falls back to its descriptors.
 *
 * <p>Word kinds: {@code DEVICE} an existing device, {@code NEW} a new name (nothing to offer),
 * {@code TYPE} a target type, {@code KEY} a tunable of the device given before it,
 * {@code KEY=VALUE…} the arguments of the type given before them, {@code MODE} a cache mode,
 * {@code MIRROR} an existing device of type {@code mirror}, {@code LEG} a leg of the mirror given before it;
 * anything else is free text. {@code [--flag]} words are the flags the command parses itself.
 */
final class CommandWords {

    /** A command's flags and its positional word kinds; the last one repeats if it ends in "…". */
    record Syntax(List<String> flags, List<String> kinds) {

        /** The kind of the positional word at {@code index}, or null past the end. */
        String kindAt(int index) {
            if (index < kinds.size()) {
                return kinds.get(index);
            }
            String last = kinds.isEmpty() ? null : kinds.get(kinds.size() - 1);
            return last != null && last.endsWith("…") ? last : null;
        }

        /** The word typed at the first position of {@code kind}, or null. */
        String wordOf(String kind, List<String> positional) {
            int i = kinds.indexOf(kind);
            return i >= 0 && i < positional.size() ? positional.get(i) : null;
        }
    }

    /** The words of {@link CacheMode}, as {@code cache:mode} takes them. */
    static List<String> modes() {
        List<String> out = new ArrayList<>();
        for (CacheMode m : CacheMode.values()) {
            out.add(m.label());
        }
        return out;
    }

    private static final Map<String, String> TABLE = Map.ofEntries(
            Map.entry("dev:create", "[--transient] NEW TYPE KEY=VALUE…"),
            Map.entry("dev:list", "[--bytes]"),
            Map.entry("dev:info", "[--bytes] DEVICE"),
            Map.entry("dev:status", "DEVICE"),
            Map.entry("dev:table", "DEVICE"),
            Map.entry("dev:message", "[--transient] DEVICE KEY VALUE"),
            Map.entry("dev:suspend", "DEVICE"),
            Map.entry("dev:resume", "DEVICE"),
            Map.entry("dev:reload", "[--force] DEVICE TYPE KEY=VALUE…"),
            Map.entry("dev:remove", "[--force] DEVICE"),
            Map.entry("dev:targets", ""),
            Map.entry("cache:stats", "DEVICE"),
            Map.entry("cache:set", "DEVICE KEY VALUE"),
            Map.entry("cache:writeback", "DEVICE"),
            Map.entry("cache:detach", "[--keep-cache] [--cancel] DEVICE"),
            // --lower NAME comes from the command's own option (it takes a value)
            Map.entry("cache:attach", "DEVICE TYPE KEY=VALUE…"),
            Map.entry("cache:mode", "DEVICE MODE"),
            Map.entry("cache:switch", "[--cancel] DEVICE TYPE KEY=VALUE…"),
            Map.entry("cache:resize", "[--cancel] DEVICE"),
            Map.entry("cache:controllers", ""),
            Map.entry("cache:check", "DEVICE"),
            Map.entry("nbd:export", "DEVICE"),
            Map.entry("nbd:exports", ""),
            Map.entry("nbd:unexport", "EXPORT"),
            // --all comes from mirror:resync's own option
            Map.entry("mirror:status", "MIRROR"),
            Map.entry("mirror:resync", "MIRROR"),
            Map.entry("mirror:recover", "MIRROR LEG"),
            Map.entry("mirror:fail", "MIRROR LEG"),
            Map.entry("feature:list", ""),
            Map.entry("feature:install", "FEATURE…"),
            Map.entry("feature:uninstall", "FEATURE"));

    private CommandWords() {
    }

    /** The syntax of a command ({@code scope:function}), or null if the table does not know it. */
    static Syntax of(String command) {
        String line = TABLE.get(command);
        return line == null ? null : parse(line);
    }

    static Syntax parse(String line) {
        List<String> flags = new ArrayList<>();
        List<String> kinds = new ArrayList<>();
        for (String w : line.strip().split("\\s+")) {
            if (w.isEmpty()) {
                continue;
            }
            if (w.startsWith("[--") && w.endsWith("]")) {
                flags.add(w.substring(1, w.length() - 1));
            } else {
                kinds.add(w);
            }
        }
        return new Syntax(List.copyOf(flags), List.copyOf(kinds));
    }
}
