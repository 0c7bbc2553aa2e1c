package dev.strata.core.internal.command;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.strata.api.InvalidArgumentException;
import dev.strata.api.TargetArguments;

/**
 * The words of one {@code dev:} command, parsed by the command itself rather than by Gogo's
 * overload matching (which answers a missing word with {@code Cannot coerce …}): options
 * ({@code --force}) anywhere, then positional words; every mistake is one line ending in the
 * command's usage.
 */
final class Words {
    private final String usage;
    private final List<String> positional = new ArrayList<>();
    private final List<String> options = new ArrayList<>();

    /**
     * @param usage   the command's usage line, e.g. {@code dev:remove [--force] NAME}
     * @param allowed the options it takes, e.g. {@code --force}
     */
    Words(String usage, Set<String> allowed, String... words) {
        this.usage = usage;
        for (String w : words == null ? new String[0] : words) {
            if (w == null) {
                continue;
            }
            if (w.startsWith("--")) {
                if (!allowed.contains(w)) {
                    throw wrong("unknown option " + w);
                }
                options.add(w);
            } else {
                positional.add(w);
            }
        }
    }

    boolean has(String option) {
        return options.contains(option);
    }

    /** Positional word {@code i}, named {@code what} in the error if it is missing. */
    String get(int i, String what) {
        if (i >= positional.size()) {
            throw wrong("missing " + what);
        }
        return positional.get(i);
    }

    int count() {
        return positional.size();
    }

    /** Refuses more than {@code n} positional words. */
    Words atMost(int n) {
        if (positional.size() > n) {
            throw wrong("unexpected '" + positional.get(n) + "'");
        }
        return this;
    }

    /** Words from {@code i} on as target arguments: {@code KEY=VALUE} words, or {@code KEY VALUE} pairs. */
    Map<String, String> arguments(int from) {
        List<String> rest = positional.subList(Math.min(from, positional.size()), positional.size());
        List<String> kv = new ArrayList<>();
        for (int i = 0; i < rest.size(); i++) {
            String w = rest.get(i);
            if (w.indexOf('=') > 0 || i + 1 >= rest.size() || rest.get(i + 1).indexOf('=') > 0) {
                kv.add(w); // KEY=VALUE, or a lone word that TargetArguments refuses in its own words
            } else {
                kv.add(w + "=" + rest.get(++i));
            }
        }
        try {
            return TargetArguments.parse(kv);
        } catch (InvalidArgumentException e) {
            throw wrong(e.getMessage());
        }
    }

    /** Exactly one tunable from {@code i} on: {@code KEY VALUE} or {@code KEY=VALUE}. */
    Map.Entry<String, String> tunable(int from) {
        int left = positional.size() - from;
        if (left == 1) {
            String w = positional.get(from);
            int eq = w.indexOf('=');
            if (eq <= 0) {
                throw wrong(left == 1 && eq < 0 ? "missing the value of " + w : "missing the key");
            }
            return Map.entry(w.substring(0, eq), w.substring(eq + 1));
        }
        if (left == 2) {
            return Map.entry(positional.get(from), positional.get(from + 1));
        }
        throw wrong(left == 0 ? "missing KEY VALUE" : "unexpected '" + positional.get(from + 2) + "'");
    }

    InvalidArgumentException wrong(String what) {
        return new InvalidArgumentException(what + "; usage: " + usage);
    }

    static Map<String, String> ordered(Map<String, String> m) {
        return new LinkedHashMap<>(m);
    }
}
