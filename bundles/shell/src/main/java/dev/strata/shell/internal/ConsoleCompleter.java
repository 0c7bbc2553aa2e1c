package dev.strata.shell.internal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.felix.service.command.CommandSession;
import org.jline.reader.Candidate;
import org.jline.reader.Completer;
import org.jline.reader.LineReader;
import org.jline.reader.ParsedLine;

import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceManager;

/**
 * Tab completion: the command word from the session's commands (with their descriptions), then
 * for each positional word what {@link CommandWords} says it is (for a command it does not know,
 * what the parameter's {@code @Descriptor} suggests) — a device (the device manager's
 * devices), a target type ({@link DeviceManager#targetTypes()}), a tunable key (the
 * {@code [key=value]} words of the device's type's usage line), {@code key=value} arguments
 * (the keys of the type given earlier on the line; device names after {@code backing=} and the
 * like), a cache mode — and options ({@code --force}) after a {@code -}.
 */
final class ConsoleCompleter implements Completer {

    private static final Pattern USAGE_KEY = Pattern.compile("\\[?([A-Za-z_][A-Za-z0-9_.-]*)=([^\\s\\]]*)\\]?");
    /** Usage placeholders that stand for a device name. */
    private static final Set<String> DEVICE_PLACEHOLDERS = Set.of("DEV", "DEVICE", "NAME");

    private final CommandSession session;
    private final Supplier<DeviceManager> devices;

    ConsoleCompleter(CommandSession session, Supplier<DeviceManager> devices) {
        this.session = session;
        this.devices = devices;
    }

    @Override
    public void complete(LineReader reader, ParsedLine line, List<Candidate> candidates) {
        try {
            List<String> words = line.words();
            int index = line.wordIndex();
            String current = index < words.size() ? line.word().substring(0, Math.min(line.wordCursor(), line.word().length())) : "";
            if (index == 0) {
                commands(candidates);
                return;
            }
            CommandInfo command = CommandInfo.find(session, words.get(0));
            if (command == null) {
                return;
            }
            CommandWords.Syntax syntax = CommandWords.of(command.name);
            if (current.startsWith("-")) {
                for (CommandInfo.Option o : command.options()) {
                    for (String n : o.names()) {
                        candidates.add(new Candidate(n, n, null, blankToNull(o.descriptor()), null, null, true));
                    }
                }
                if (syntax != null) {
                    for (String f : syntax.flags()) {
                        candidates.add(new Candidate(f, f, null, null, null, null, true));
                    }
                }
                return;
            }
            List<String> positional = positional(command, words.subList(1, Math.min(index, words.size())));
            String kind;
            String device;
            String type;
            if (syntax != null) {
                kind = syntax.kindAt(positional.size());
                device = syntax.wordOf("DEVICE", positional);
                if (device == null) {
                    device = syntax.wordOf("MIRROR", positional);
                }
                type = syntax.wordOf("TYPE", positional);
            } else {
                kind = guessedKind(command, positional.size());
                device = positional.isEmpty() ? null : positional.get(0);
                type = typeOnLine(command.params(), positional);
            }
            if (kind == null) {
                return;
            }
            switch (kind) {
                case "DEVICE" -> deviceNames("", candidates);
                case "MIRROR" -> devicesOfType("mirror", candidates);
                case "LEG" -> legs(device, candidates);
                case "TYPE" -> targetTypes(candidates);
                case "KEY" -> tunableKeys(device, candidates);
                case "KEY=VALUE…" -> keyValues(type, current, candidates);
                case "MODE" -> CommandWords.modes().forEach(m -> candidates.add(new Candidate(m, m, null, null, null, null, true)));
                default -> {
                    // a new name or free text: nothing to offer
                }
            }
        } catch (RuntimeException e) {
            // completion must never break the line being edited
        }
    }

    /** For a command {@link CommandWords} does not know: the kind its {@code @Descriptor} wording suggests. */
    private static String guessedKind(CommandInfo command, int pos) {
        List<CommandInfo.Param> params = command.params();
        if (params.isEmpty()) {
            return null;
        }
        CommandInfo.Param last = params.get(params.size() - 1);
        CommandInfo.Param param = pos < params.size() ? params.get(pos) : last.varargs() ? last : null;
        if (param == null) {
            return null;
        }
        String label = param.label();
        boolean create = command.name.endsWith(":create");
        return label.equals("DEVICE") && pos == 0 && create ? "NEW" : label;
    }

    private void commands(List<Candidate> candidates) {
        Map<String, Integer> bare = new LinkedHashMap<>();
        List<CommandInfo> all = CommandInfo.all(session);
        for (CommandInfo c : all) {
            bare.merge(c.name.substring(c.name.indexOf(':') + 1), 1, Integer::sum);
        }
        for (CommandInfo c : all) {
            String scope = c.name.substring(0, c.name.indexOf(':'));
            String function = c.name.substring(c.name.indexOf(':') + 1);
            String d = blankToNull(c.description());
            candidates.add(new Candidate(c.name, c.name, scope, d, null, null, true));
            if (bare.get(function) == 1 && !function.startsWith("_")) {
                candidates.add(new Candidate(function, function, scope, d, null, null, true));
            }
        }
    }

    /** The positional words typed so far (options and their values left out). */
    private static List<String> positional(CommandInfo command, List<String> args) {
        List<String> out = new ArrayList<>();
        List<CommandInfo.Option> options = command.options();
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if (a.startsWith("-")) {
                boolean takesValue = options.stream().anyMatch(o -> o.names().contains(a) && !o.flag());
                if (takesValue) {
                    i++;
                }
                continue;
            }
            out.add(a);
        }
        return out;
    }

    private static String typeOnLine(List<CommandInfo.Param> params, List<String> positional) {
        for (int i = 0; i < params.size() && i < positional.size(); i++) {
            if (params.get(i).label().equals("TYPE")) {
                return positional.get(i);
            }
        }
        return null;
    }

    private void deviceNames(String prefix, List<Candidate> candidates) {
        DeviceManager dm = devices.get();
        if (dm == null) {
            return;
        }
        for (DeviceInfo d : dm.list()) {
            candidates.add(new Candidate(prefix + d.name(), d.name(), "devices", d.type(), null, null, true));
        }
    }

    private void devicesOfType(String type, List<Candidate> candidates) {
        DeviceManager dm = devices.get();
        if (dm == null) {
            return;
        }
        for (DeviceInfo d : dm.list()) {
            if (type.equals(d.type())) {
                candidates.add(new Candidate(d.name(), d.name(), "devices", d.type(), null, null, true));
            }
        }
    }

    /** The legs of a mirror: its {@code leg.NAME} status keys, described by their state. */
    private void legs(String mirror, List<Candidate> candidates) {
        DeviceManager dm = devices.get();
        if (dm == null || mirror == null) {
            return;
        }
        try {
            for (Map.Entry<String, String> e : legsOf(dm.status(mirror)).entrySet()) {
                candidates.add(new Candidate(e.getKey(), e.getKey(), "legs", e.getValue(), null, null, true));
            }
        } catch (java.io.IOException | RuntimeException e) {
            // no such device or no target now: nothing to offer
        }
    }

    /** {@code leg.NAME=state} status keys as NAME → state, in order. */
    static Map<String, String> legsOf(Map<String, String> status) {
        Map<String, String> out = new LinkedHashMap<>();
        status.forEach((k, v) -> {
            if (k.startsWith("leg.")) {
                out.put(k.substring(4), v);
            }
        });
        return out;
    }

    private void targetTypes(List<Candidate> candidates) {
        DeviceManager dm = devices.get();
        if (dm == null) {
            return;
        }
        for (DeviceManager.TargetType t : dm.targetTypes()) {
            candidates.add(new Candidate(t.type(), t.type(), "target types", describe(t.usage()), null, null, true));
        }
    }

    /** Keys a device's target takes: the {@code key=value} words of its type's usage line. */
    private void tunableKeys(String device, List<Candidate> candidates) {
        DeviceManager dm = devices.get();
        if (dm == null || device == null) {
            return;
        }
        Optional<DeviceInfo> info = dm.info(device);
        if (info.isEmpty()) {
            return;
        }
        for (String key : usageKeys(usageOf(dm, info.get().type())).keySet()) {
            candidates.add(new Candidate(key, key, null, null, null, null, true));
        }
    }

    private void keyValues(String type, String current, List<Candidate> candidates) {
        DeviceManager dm = devices.get();
        if (dm == null || type == null) {
            return;
        }
        Map<String, String> keys = usageKeys(usageOf(dm, type));
        int eq = current.indexOf('=');
        if (eq > 0) {
            String placeholder = keys.get(current.substring(0, eq));
            if (placeholder != null && DEVICE_PLACEHOLDERS.contains(placeholder)) {
                deviceNames(current.substring(0, eq + 1), candidates);
            }
            return;
        }
        for (Map.Entry<String, String> k : keys.entrySet()) {
            // no space after "key=": the value comes next
            candidates.add(new Candidate(k.getKey() + "=", k.getKey() + "=", null, k.getValue(), null, null, false));
        }
    }

    private static String usageOf(DeviceManager dm, String type) {
        for (DeviceManager.TargetType t : dm.targetTypes()) {
            if (t.type().equals(type)) {
                return t.usage();
            }
        }
        return "";
    }

    /** {@code key → placeholder} of a usage line such as {@code file path=FILE [size=SIZE]}. */
    static Map<String, String> usageKeys(String usage) {
        Map<String, String> out = new LinkedHashMap<>();
        String syntax = usage == null ? "" : usage.split("\\s+—\\s+|\\s+-\\s+", 2)[0];
        Matcher m = USAGE_KEY.matcher(syntax);
        while (m.find()) {
            out.putIfAbsent(m.group(1), m.group(2));
        }
        return out;
    }

    private static String describe(String usage) {
        if (usage == null) {
            return null;
        }
        // "file path=FILE …  — a regular file …": the words after the dash describe the type
        String[] parts = usage.split("\\s+—\\s+", 2);
        String d = parts[parts.length - 1].strip();
        return d.isEmpty() ? null : d;
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }
}
