package dev.strata.shell.internal;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;

/**
 * Which word a command could not take, when Gogo found no method of it for the words typed
 * ({@code Cannot coerce tail(Token) to any of …}): one line that names the command, the option or
 * parameter, the word and what is expected —
 * {@code nbd:export: --port "abc" is not a number; give the TCP port as a whole number, e.g. 10809}.
 *
 * <p>It replays Gogo 1.1.6's own matching ({@code Reflective.transformParameters}) over each
 * overload of the command: every {@code @Parameter} option is taken out of the words wherever it
 * stands, an option with a value takes the word after it, the remaining words are the positional
 * parameters (an array or list takes the rest). The overload that explains the failure best wins:
 * a word that does not convert to its parameter's type before an option without its value, an
 * unknown option, a missing or an extra word. Words this cannot read ({@code $var}, closures,
 * sub-commands) fit any type; if nothing is found wrong the caller says so in its own one line.
 * Every command is read from its annotations, so no command has code of its own for this.
 */
final class BadArguments {

    /** How well a problem explains the failure: the lowest rank wins. */
    private enum Kind { BAD_VALUE, NO_VALUE, UNKNOWN_OPTION, COUNT }

    private record Problem(Kind kind, String text) {
    }

    /** One parameter of a method: its type, its option names (empty: positional), descriptor. */
    private record Slot(Class<?> type, Parameter option, String descriptor, CommandInfo.Param param) {
        boolean rest() {
            return type.isArray() || List.class.isAssignableFrom(type);
        }
    }

    private static final Pattern EXAMPLE = Pattern.compile("\\be\\.g\\.\\s+([^\\s,;)]+)");
    private static final Pattern DEFAULT = Pattern.compile("\\bdefault:?\\s+([^\\s,;:)]+)");
    /** A range a descriptor gives for its number, e.g. "TCP port (1 to 65535, default 10809)". */
    private static final Pattern RANGE = Pattern.compile("(?<![\\w.-])(-?\\d+) to (-?\\d+)\\b");
    /** A usage line longer than this is left to {@code help NAME}. */
    private static final int SHORT_USAGE = 100;

    private BadArguments() {
    }

    /**
     * The line (without {@code error: }) for a command that Gogo could not call with these words,
     * or null when no word is seen wrong. A null word is one that cannot be read before it runs.
     */
    static String explain(CommandInfo info, List<String> words) {
        Problem best = null;
        for (Method m : info.methods) {
            Problem p = check(info, m, words);
            if (p == null) {
                return null; // this overload takes the words: the failure is not theirs
            }
            if (best == null || p.kind().ordinal() <= best.kind().ordinal()) {
                best = p; // ties: the overload with more parameters (methods come sorted by count)
            }
        }
        return best == null ? null : info.name + ": " + best.text();
    }

    private static Problem check(CommandInfo info, Method m, List<String> words) {
        List<Slot> options = new ArrayList<>();
        List<Slot> positional = new ArrayList<>();
        Class<?>[] types = m.getParameterTypes();
        Annotation[][] anns = m.getParameterAnnotations();
        for (int i = 0; i < types.length; i++) {
            if (CommandSession.class.isAssignableFrom(types[i])) {
                continue;
            }
            Parameter option = find(anns[i], Parameter.class);
            Descriptor d = find(anns[i], Descriptor.class);
            String descriptor = d == null ? "" : d.value().strip().replaceAll("\\s*\\R\\s*", " ");
            boolean rest = types[i].isArray() || List.class.isAssignableFrom(types[i]);
            CommandInfo.Param param = new CommandInfo.Param(descriptor.isEmpty()
                    ? types[i].getSimpleName().toLowerCase(Locale.ROOT) : descriptor, rest);
            (option != null ? options : positional).add(new Slot(types[i], option, descriptor, param));
        }
        List<String> left = new ArrayList<>(words);
        for (Slot o : options) {
            int at = -1;
            String typed = null;
            for (String name : o.option().names()) {
                at = left.indexOf(name);
                if (at >= 0) {
                    typed = name;
                    break;
                }
            }
            if (at < 0) {
                continue;
            }
            left.remove(at);
            if (!Parameter.UNSPECIFIED.equals(o.option().presentValue())) {
                continue; // a flag
            }
            if (at >= left.size()) {
                return new Problem(Kind.NO_VALUE, typed + " needs a value: " + what(o) + example(o));
            }
            String value = left.remove(at);
            String wrong = unfit(o.type(), value);
            if (wrong != null) {
                return badValue(typed, value, wrong, o);
            }
        }
        int i = 0;
        for (Slot p : positional) {
            if (p.rest()) {
                Class<?> element = p.type().isArray() ? p.type().getComponentType() : Object.class;
                for (; i < left.size(); i++) {
                    String wrong = unfit(element, left.get(i));
                    if (wrong != null) {
                        return badValue(p.param().label(), left.get(i), wrong, p);
                    }
                }
                break;
            }
            if (i >= left.size()) {
                return new Problem(Kind.COUNT, "missing " + p.param().label()
                        + (p.param().syntax() ? "" : " (" + p.descriptor() + ")") + "; " + usageHint(info));
            }
            String wrong = unfit(p.type(), left.get(i));
            if (wrong != null) {
                return badValue(p.param().label(), left.get(i), wrong, p);
            }
            i++;
        }
        if (i < left.size()) {
            for (String w : left) { // a word like an option, taken for a positional: the likely cause
                if (w != null && w.startsWith("-") && w.length() > 1 && unfit(double.class, w) != null) {
                    return new Problem(Kind.UNKNOWN_OPTION, "unknown option " + w + "; 'help " + info.name + "' lists its options");
                }
            }
            String extra = left.get(i);
            return new Problem(Kind.COUNT, (extra == null ? "too many arguments" : "unexpected \"" + extra + "\"")
                    + "; " + usageHint(info));
        }
        return null;
    }

    /**
     * {@code --port "abc" is not a number; give the TCP port as a whole number, e.g. 10809}; a
     * number past its Java type whose descriptor gives a range says that range, not the type's:
     * {@code --port "99999999999" is out of range; use 1 to 65535}.
     */
    private static Problem badValue(String label, String value, String wrong, Slot s) {
        Matcher range = RANGE.matcher(s.descriptor());
        if (wrong.startsWith("is out of range") && range.find()) {
            return new Problem(Kind.BAD_VALUE, label + " \"" + value + "\" is out of range; use " + range.group(1)
                    + " to " + range.group(2));
        }
        return new Problem(Kind.BAD_VALUE, label + " \"" + value + "\" " + wrong + expected(s));
    }

    /**
     * The statements of a line, each as its words: split at {@code ;}, {@code |} and line ends
     * outside quotes and brackets; quotes are taken off. A word this cannot read before it runs
     * ({@code $var}, {@code {closure}}, {@code (sub-command)}, {@code [list]}) is null.
     */
    static List<List<String>> statements(String line) {
        List<List<String>> out = new ArrayList<>();
        List<String> words = new ArrayList<>();
        StringBuilder word = new StringBuilder();
        boolean inWord = false;
        boolean unreadable = false;
        char quote = 0;
        int depth = 0;
        String s = line == null ? "" : line;
        for (int i = 0; i <= s.length(); i++) {
            char c = i < s.length() ? s.charAt(i) : '\n';
            if (quote != 0) {
                if (c == quote) {
                    quote = 0;
                } else if (c == '\\' && quote == '"' && i + 1 < s.length()) {
                    word.append(s.charAt(++i));
                } else {
                    unreadable |= c == '$' && quote == '"';
                    word.append(c);
                }
                continue;
            }
            if (depth > 0) {
                depth += c == '{' || c == '(' || c == '[' ? 1 : c == '}' || c == ')' || c == ']' ? -1 : 0;
                continue;
            }
            boolean end = c == ';' || c == '|' || c == '\n' || c == '\r';
            if (Character.isWhitespace(c) || end) {
                if (inWord) {
                    words.add(unreadable ? null : word.toString());
                }
                word.setLength(0);
                inWord = false;
                unreadable = false;
                if (end && !words.isEmpty()) {
                    out.add(words);
                    words = new ArrayList<>();
                }
                continue;
            }
            inWord = true;
            if (c == '\'' || c == '"') {
                quote = c;
            } else if (c == '{' || c == '(' || c == '[') {
                depth = 1;
                unreadable = true;
            } else {
                unreadable |= c == '$';
                word.append(c);
            }
        }
        return out;
    }

    /** The command word of the line's first statement, or "the command". */
    static String firstCommand(String line) {
        List<List<String>> s = statements(line);
        return s.isEmpty() || s.get(0).get(0) == null ? "the command" : s.get(0).get(0);
    }

    /** Why {@code value} is no {@code type} ("is not a number"), or null if it is (or cannot be told). */
    static String unfit(Class<?> type, String value) {
        if (value == null) {
            return null;
        }
        Class<?> t = boxed(type);
        if (t == Integer.class || t == Long.class || t == Short.class || t == Byte.class) {
            String v = value.strip();
            if (!v.matches("[-+]?\\d+")) {
                return "is not a number";
            }
            BigInteger n = new BigInteger(v);
            if (n.compareTo(BigInteger.valueOf(min(t))) < 0 || n.compareTo(BigInteger.valueOf(max(t))) > 0) {
                return "is out of range (" + min(t) + " to " + max(t) + ")";
            }
            return null;
        }
        if (t == Double.class || t == Float.class) {
            try {
                Double.parseDouble(value.strip());
                return null;
            } catch (NumberFormatException e) {
                return "is not a number";
            }
        }
        if (t == Character.class) {
            return value.length() == 1 ? null : "is not a single character";
        }
        if (t.isEnum()) {
            for (Object c : t.getEnumConstants()) {
                if (((Enum<?>) c).name().equalsIgnoreCase(value.strip())) {
                    return null;
                }
            }
            return "is not one of " + choices(t);
        }
        return null; // String, Object and types Gogo converts by its own rules: cannot tell here
    }

    /** {@code ; give the TCP port as a whole number, e.g. 10809}. */
    private static String expected(Slot s) {
        Class<?> t = boxed(s.rest() && s.type().isArray() ? s.type().getComponentType() : s.type());
        if (t.isEnum()) {
            return "";
        }
        String as = t == Double.class || t == Float.class ? "a number" : t == Character.class ? "one character"
                : t == Byte.class || t == Short.class ? "a whole number from " + min(t) + " to " + max(t) : "a whole number";
        return "; give " + what(s) + " as " + as + example(s);
    }

    /** What the parameter is, from the first words of its descriptor: "TCP port (default …)" → "the TCP port". */
    private static String what(Slot s) {
        String head = s.descriptor().split("\\s+\\(|;\\s|:\\s|\\s+—\\s", 2)[0].strip();
        if (head.isEmpty()) {
            return "the value";
        }
        return head.matches("(?i)^(the|a|an|one|every)\\s.*") ? head : "the " + head;
    }

    /** {@code , e.g. 10809}: an example of the descriptor's ("e.g. X", else "default X") that fits the type. */
    private static String example(Slot s) {
        Class<?> t = s.rest() && s.type().isArray() ? s.type().getComponentType() : s.type();
        for (Pattern p : List.of(EXAMPLE, DEFAULT)) {
            Matcher m = p.matcher(s.descriptor());
            if (m.find() && unfit(t, m.group(1)) == null && (t != String.class || p == EXAMPLE)) {
                return ", e.g. " + m.group(1);
            }
        }
        return "";
    }

    private static String usageHint(CommandInfo info) {
        String head = info.usage().get(0);
        return head.length() <= SHORT_USAGE ? head : "'help " + info.name + "' shows the usage";
    }

    private static String choices(Class<?> type) {
        List<String> names = new ArrayList<>();
        for (Object c : type.getEnumConstants()) {
            names.add(((Enum<?>) c).name().toLowerCase(Locale.ROOT));
        }
        return String.join(", ", names);
    }

    private static long min(Class<?> t) {
        return t == Byte.class ? Byte.MIN_VALUE : t == Short.class ? Short.MIN_VALUE : t == Integer.class ? Integer.MIN_VALUE : Long.MIN_VALUE;
    }

    private static long max(Class<?> t) {
        return t == Byte.class ? Byte.MAX_VALUE : t == Short.class ? Short.MAX_VALUE : t == Integer.class ? Integer.MAX_VALUE : Long.MAX_VALUE;
    }

    private static Class<?> boxed(Class<?> t) {
        if (!t.isPrimitive()) {
            return t;
        }
        return t == int.class ? Integer.class : t == long.class ? Long.class : t == short.class ? Short.class
                : t == byte.class ? Byte.class : t == double.class ? Double.class : t == float.class ? Float.class
                : t == char.class ? Character.class : t == boolean.class ? Boolean.class : t;
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
