package dev.strata.shell.internal;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;

import org.apache.felix.gogo.runtime.CommandProxy;
import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;

/**
 * What the shell knows about one Gogo command ({@code scope:function}): the public methods of its
 * service object that Gogo would call for it, with their {@code @Descriptor} and {@code @Parameter}
 * annotations. Help, usage lines and completion are all read from here, so a command documents
 * itself once, where it is declared.
 */
final class CommandInfo {

    /** One positional parameter (not a {@code CommandSession}, not an {@code @Parameter} option). */
    record Param(String descriptor, boolean varargs, String synopsis) {
        Param(String descriptor, boolean varargs) {
            this(descriptor, varargs, null);
        }

        /** A short upper-case label from the descriptor's first words: "device name" → NAME. */
        String label() {
            if (synopsis != null) {
                return synopsis;
            }
            String d = descriptor.toLowerCase(Locale.ROOT);
            if (d.contains("key=value")) {
                return "KEY=VALUE…";
            }
            if (d.contains("type")) {
                return "TYPE";
            }
            if (d.contains("tunable") || d.startsWith("key")) {
                return "KEY";
            }
            if (d.startsWith("value") || d.startsWith("new value")) {
                return "VALUE";
            }
            if (d.contains("device")) {
                return "DEVICE";
            }
            String first = d.replaceFirst("^(the|a|an)\\s+", "").replaceFirst("'s\\b", "").split("[^a-z0-9_]+", 2)[0];
            return (first.isEmpty() ? "ARG" : first.toUpperCase(Locale.ROOT)) + (varargs ? "…" : "");
        }

        /** What completion offers for it: DEVICE, TYPE, KEY, KEY=VALUE… (else the label). */
        String kind() {
            if (synopsis == null) {
                return label();
            }
            return switch (synopsis.replace("[", "").replace("]", "")) {
                case "NAME", "DEV", "DEVICE" -> "DEVICE";
                case "TYPE" -> "TYPE";
                case "KEY" -> "KEY";
                case "KEY=VALUE…" -> "KEY=VALUE…";
                default -> synopsis;
            };
        }
    }

    /**
     * A synopsis word of a command that takes its words as one varargs parameter and describes
     * them as {@code "[--force] NAME TYPE KEY=VALUE…"} (the dev: commands accept KEY=VALUE and
     * KEY VALUE alike, so they parse their own words): an option, or a placeholder.
     */
    private static final Pattern SYNOPSIS_WORD = Pattern.compile("\\[?(--[a-z][a-z-]*|[A-Z][A-Z_]*(=[A-Z_]+)?…?)]?");

    /** One option or flag: {@code --force}, {@code --name NAME}. */
    record Option(List<String> names, String descriptor, boolean flag) {
    }

    final String name;
    final List<Method> methods;

    CommandInfo(String name, List<Method> methods) {
        this.name = name;
        this.methods = methods;
    }

    /** Every command of the session, by {@code scope:function}, sorted. */
    static List<CommandInfo> all(CommandSession session) {
        TreeMap<String, CommandInfo> out = new TreeMap<>();
        for (String name : commandNames(session)) {
            CommandInfo c = lookup(session, name);
            if (c != null) {
                out.put(name, c);
            }
        }
        return new ArrayList<>(out.values());
    }

    /** The command a word names ({@code dev:create} or {@code create}), or null. */
    static CommandInfo find(CommandSession session, String word) {
        String resolved = resolve(session, word);
        return resolved == null ? null : lookup(session, resolved);
    }

    /** {@code scope:function} for a word, following the session's SCOPE path, or null. */
    static String resolve(CommandSession session, String word) {
        Set<String> names = commandNames(session);
        if (word.indexOf(':') >= 0) {
            return names.contains(word) ? word : null;
        }
        Object path = session.get("SCOPE");
        List<String> scopes = new ArrayList<>(List.of(String.valueOf(path == null ? "*" : path).split(":")));
        if (!scopes.contains("*")) {
            scopes.add("*");
        }
        for (String scope : scopes) {
            for (String n : names) {
                if ("*".equals(scope) ? n.endsWith(":" + word) : n.equals(scope + ":" + word)) {
                    return n;
                }
            }
        }
        return null;
    }

    @SuppressWarnings("unchecked")
    static Set<String> commandNames(CommandSession session) {
        Object commands = session.get(".commands");
        Set<String> out = new TreeSet<>();
        if (commands instanceof Collection<?> c) {
            for (Object o : c) {
                out.add(String.valueOf(o));
            }
        }
        return out;
    }

    private static CommandInfo lookup(CommandSession session, String name) {
        Object f = session.get(name);
        if (!(f instanceof CommandProxy proxy)) {
            return new CommandInfo(name, List.of()); // a closure or a variable: no annotations
        }
        Object target;
        try {
            target = proxy.getTarget();
        } catch (RuntimeException e) {
            return null; // the service went away
        }
        try {
            if (target == null) {
                return null;
            }
            String function = name.substring(name.indexOf(':') + 1).toLowerCase(Locale.ROOT);
            Set<String> candidates = Set.of(function, "get" + function, "is" + function, "_" + function);
            List<Method> methods = new ArrayList<>();
            for (Method m : target.getClass().getMethods()) {
                if (m.getDeclaringClass() != Object.class && candidates.contains(m.getName().toLowerCase(Locale.ROOT))) {
                    methods.add(m);
                }
            }
            methods.sort((a, b) -> Integer.compare(a.getParameterCount(), b.getParameterCount()));
            return new CommandInfo(name, methods);
        } finally {
            proxy.ungetTarget();
        }
    }

    /** The command's one-line description, or "" if it has none. */
    String description() {
        for (Method m : methods) {
            Descriptor d = m.getAnnotation(Descriptor.class);
            if (d != null) {
                return oneLine(d.value());
            }
        }
        return "";
    }

    /** The positional parameters of the method with the most of them. */
    List<Param> params() {
        List<Param> best = List.of();
        for (Method m : methods) {
            List<Param> p = params(m);
            if (p.size() > best.size()) {
                best = p;
            }
        }
        return best;
    }

    static List<Param> params(Method m) {
        List<String> synopsis = synopsis(m);
        if (synopsis != null) {
            List<Param> out = new ArrayList<>();
            for (String w : synopsis) {
                if (!w.replace("[", "").startsWith("--")) {
                    out.add(new Param(w, w.endsWith("…") || w.endsWith("…]"), w));
                }
            }
            return out;
        }
        List<Param> out = new ArrayList<>();
        Class<?>[] types = m.getParameterTypes();
        Annotation[][] anns = m.getParameterAnnotations();
        for (int i = 0; i < types.length; i++) {
            if (CommandSession.class.isAssignableFrom(types[i]) || find(anns[i], Parameter.class) != null) {
                continue;
            }
            Descriptor d = find(anns[i], Descriptor.class);
            boolean varargs = types[i].isArray() || List.class.isAssignableFrom(types[i]);
            out.add(new Param(d == null ? types[i].getSimpleName().toLowerCase(Locale.ROOT) : oneLine(d.value()), varargs));
        }
        return out;
    }

    /** Every option of every method of the command, by first name. */
    List<Option> options() {
        TreeMap<String, Option> out = new TreeMap<>();
        for (Method m : methods) {
            Annotation[][] anns = m.getParameterAnnotations();
            for (Annotation[] a : anns) {
                Parameter p = find(a, Parameter.class);
                if (p != null) {
                    Descriptor d = find(a, Descriptor.class);
                    boolean flag = !Parameter.UNSPECIFIED.equals(p.presentValue());
                    out.putIfAbsent(p.names()[0], new Option(List.of(p.names()), d == null ? "" : oneLine(d.value()), flag));
                }
            }
            List<String> synopsis = synopsis(m);
            for (String w : synopsis == null ? List.<String>of() : synopsis) {
                String name = w.replace("[", "").replace("]", "");
                if (name.startsWith("--")) {
                    out.putIfAbsent(name, new Option(List.of(name), "", true));
                }
            }
        }
        return new ArrayList<>(out.values());
    }

    /** {@code usage: dev:create NAME TYPE KEY=VALUE…} and one line per parameter and option. */
    List<String> usage() {
        List<String> lines = new ArrayList<>();
        List<Param> params = params();
        List<Option> options = options();
        StringBuilder head = new StringBuilder("usage: ").append(name);
        for (Option o : options) {
            head.append(" [").append(o.names().get(0)).append(o.flag() ? "" : " VALUE").append(']');
        }
        for (Param p : params) {
            head.append(' ').append(p.label());
        }
        lines.add(head.toString());
        String description = description();
        if (!description.isEmpty()) {
            lines.add("  " + description);
        }
        for (Param p : params) {
            lines.add(String.format("  %-14s %s", p.label(), p.descriptor()));
        }
        for (Option o : options) {
            lines.add(String.format("  %-14s %s", String.join(", ", o.names()), o.descriptor()));
        }
        return lines;
    }

    /**
     * The words of a single varargs parameter's synopsis descriptor (its first alternative,
     * before ", or"), or null if the method has no such parameter; "no arguments" is no words.
     */
    static List<String> synopsis(Method m) {
        Class<?>[] types = m.getParameterTypes();
        Annotation[][] anns = m.getParameterAnnotations();
        String descriptor = null;
        int positional = 0;
        for (int i = 0; i < types.length; i++) {
            if (CommandSession.class.isAssignableFrom(types[i]) || find(anns[i], Parameter.class) != null) {
                continue;
            }
            positional++;
            Descriptor d = find(anns[i], Descriptor.class);
            if (types[i] == String[].class && d != null) {
                descriptor = oneLine(d.value());
            }
        }
        if (positional != 1 || descriptor == null) {
            return null;
        }
        if (descriptor.equals("no arguments")) {
            return List.of();
        }
        List<String> words = List.of(descriptor.split(",\\s*or\\s+", 2)[0].strip().split("\\s+"));
        for (String w : words) {
            if (!SYNOPSIS_WORD.matcher(w).matches()) {
                return null;
            }
        }
        return words;
    }

    private static String oneLine(String s) {
        return s.strip().replaceAll("\\s*\\R\\s*", " ");
    }

    private static <T extends Annotation> T find(Annotation[] anns, Class<T> type) {
        for (Annotation a : anns) {
            if (type.isInstance(a)) {
                return type.cast(a);
            }
        }
        return null;
    }
}
