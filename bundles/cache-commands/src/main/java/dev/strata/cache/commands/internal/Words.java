package dev.strata.cache.commands.internal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import dev.strata.api.InvalidArgumentException;

/**
 * The word parsing of every {@code cache:} command that takes free words ({@code String...}: set,
 * attach, switch, resize, replace), so that a mistake is one line naming the word, as the shell says
 * for the commands Gogo matches itself ({@code cache:detach: unexpected "extra"; usage: …}):
 * {@code cache:switch: unexpected "extra"; usage: cache:switch DEV TYPE [cache=CDEV] [key=value…]},
 * {@code cache:replace: cache= is given twice; usage: …}, {@code cache:set: unknown option --al; usage: …}.
 *
 * <p>Words are the positional ones first ({@code DEV}, {@code TYPE}, …; none has {@code =}), then
 * {@code key=value} arguments where the command takes them. A word starting with {@code -} is an
 * option Gogo did not know (the known ones are taken out before the call).
 */
final class Words {
    /** The parsed words: the positional ones, then the arguments in the order given. */
    record Parsed(List<String> positional, Map<String, String> args) {
    }

    private final String command;
    private final String usage;

    /** {@code usage}: the short form, without {@code usage: }, e.g. {@code cache:resize DEV [size=SIZE]}. */
    Words(String command, String usage) {
        this.command = command;
        this.usage = usage;
    }

    /** The one line for a mistake: the command, what is wrong, the short usage. */
    InvalidArgumentException wrong(String what) {
        return new InvalidArgumentException(command + ": " + what + "; usage: " + usage);
    }

    /**
     * {@code names} positional words, all required, then {@code key=value} arguments if
     * {@code keyValues} (any key; the command or the target's factory checks them), else nothing more.
     */
    Parsed parse(String[] words, List<String> names, boolean keyValues) {
        List<String> positional = new ArrayList<>();
        Map<String, String> args = new LinkedHashMap<>();
        for (String w : words == null ? new String[0] : words) {
            if (w == null || w.isEmpty()) {
                continue;
            }
            if (w.startsWith("-") && w.length() > 1 && !Character.isDigit(w.charAt(1))) {
                throw wrong("unknown option " + w);
            }
            int eq = w.indexOf('=');
            if (eq < 0) {
                if (positional.size() >= names.size() || !args.isEmpty()) {
                    throw wrong("unexpected \"" + w + "\"");
                }
                positional.add(w);
                continue;
            }
            if (positional.size() < names.size()) {
                throw wrong("missing " + names.get(positional.size()) + " before \"" + w + "\"");
            }
            if (!keyValues || eq == 0) {
                throw wrong("unexpected \"" + w + "\"");
            }
            String key = w.substring(0, eq);
            if (args.putIfAbsent(key, w.substring(eq + 1)) != null) {
                throw wrong(key + "= is given twice");
            }
        }
        if (positional.size() < names.size()) {
            throw wrong("missing " + names.get(positional.size()));
        }
        return new Parsed(positional, args);
    }

    /** Refuses a key not in {@code allowed}, naming it and the allowed ones. */
    void only(Map<String, String> args, Set<String> allowed) {
        for (String key : args.keySet()) {
            if (!allowed.contains(key)) {
                throw wrong(key + "= is unknown; allowed: " + allowed.stream().sorted().map(k -> k + "=")
                        .collect(Collectors.joining(", ")));
            }
        }
    }

    /** Refuses {@code key} missing from the arguments, e.g. {@code missing cache=NEWDEV}. */
    void require(Map<String, String> args, String key, String what) {
        if (!args.containsKey(key) || args.get(key).isBlank()) {
            throw wrong("missing " + key + "=" + what);
        }
    }
}
