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
    record Param(String descriptor, boolean varargs) {
        /**
         * A descriptor that is itself a syntax ({@code [--force] NAME}, {@code DEV KEY VALUE}): a
         * command that takes its words as one list and parses them itself says so this way.
         */
        private static final Pattern SYNTAX = Pattern.compile("^(\\[--?[a-z]|\\[?[A-Z][A-Z0-9_=…]*(\\]|\\s|,|$)).*");

        /** A descriptor that lists the words the parameter takes: {@code a, b or c}. */
        private static final Pattern CHOICES = Pattern.compile("[a-z]+(, [a-z]+)* or [a-z]+");

        /** Whether the descriptor is a syntax, shown as it is. */
        boolean syntax() {
            return SYNTAX.matcher(descriptor).matches();
        }

        /** A short upper-case label from the descriptor's first words: "device name" → NAME. */
        String label() {
            if (syntax()) {
                return descriptor;
            }
            if (CHOICES.matcher(descriptor).matches()) { // "writeback, writethrough or passthrough"
                return String.join("|", descriptor.split(",\\s*|\\s+or\\s+"));
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
    }

    /** One option or flag: {@code --force}, {@code --name NAME}. */
    record Option(List<String> names, String descriptor, boolean flag) {
    }

    /** How a no-argument overload that only prints the usage is described. */
    private static final String USAGE_SUFFIX = "(usage)";
    /** The descriptor of a word list that takes no words ({@code dev:targets}). */
    private static final String NO_ARGUMENTS = "no arguments";

    final String name;
    final List<Method> methods;
    /** Whether a Strata bundle provides it (its service object is a {@code dev.strata} class). */
    final boolean strata;

    private CommandInfo(String name, List<Method> methods, boolean strata) {
        this.name = name;
        this.methods = methods;
        this.strata = strata;
    }

    /** The function: {@code create} of {@code dev:create}. */
    String function() {
        return name.substring(name.indexOf(':') + 1);
    }

    /** The scope: {@code dev} of {@code dev:create}. */
    String scope() {
        return name.substring(0, Math.max(0, name.indexOf(':')));
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
            return new CommandInfo(name, List.of(), false); // a closure or a variable: no annotations
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
            return new CommandInfo(name, methods, target.getClass().getName().startsWith("dev.strata."));
        } finally {
            proxy.ungetTarget();
        }
    }

    /**
     * The description's first clause, for a listing: up to its first {@code ": "} or {@code "; "}
     * outside parentheses ("create a device: dev:create [--transient] …" → "create a device").
     */
    String summary() {
        return HelpCommand.firstClause(description());
    }

    /**
     * The command's one-line description, or "" if it has none: that of the overload with the
     * fewest parameters, leaving out overloads that only print the usage (described as
     * "… (usage)"), whose descriptor says nothing of what the command does.
     */
    String description() {
        String usageOnly = "";
        for (Method m : methods) {
            Descriptor d = m.getAnnotation(Descriptor.class);
            if (d == null) {
                continue;
            }
            String text = oneLine(d.value());
            if (!text.endsWith(USAGE_SUFFIX)) {
                return text;
            }
            if (usageOnly.isEmpty()) {
                usageOnly = text.substring(0, text.length() - USAGE_SUFFIX.length()).strip();
            }
        }
        return usageOnly;
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
        List<Param> out = new ArrayList<>();
        Class<?>[] types = m.getParameterTypes();
        Annotation[][] anns = m.getParameterAnnotations();
        for (int i = 0; i < types.length; i++) {
            if (CommandSession.class.isAssignableFrom(types[i]) || find(anns[i], Parameter.class) != null) {
                continue;
            }
            Descriptor d = find(anns[i], Descriptor.class);
            if (d != null && oneLine(d.value()).equalsIgnoreCase(NO_ARGUMENTS)) {
                continue;
            }
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
            if (!p.syntax()) { // a syntax says it all in the usage line
                lines.add(String.format("  %-14s %s", p.label(), p.descriptor()));
            }
        }
        for (Option o : options) {
            lines.add(String.format("  %-14s %s", String.join(", ", o.names()), o.descriptor()));
        }
        return lines;
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
