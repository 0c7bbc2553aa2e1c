package dev.strata.core.internal.config;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.UnaryOperator;

/**
 * The {@code .cfg} format as FileInstall 3.7.4 reads it (properties syntax, ISO-8859-1): parsing
 * a file into its keys, and writing a configuration into a file's text while keeping what the user
 * wrote — comments, blank lines, order, and the raw text of every value that did not change (a
 * {@code ${strata.home}} stays as written: FileInstall stores it substituted, so a value is
 * unchanged when the raw text, substituted, is the value). Pure text, no I/O.
 *
 * <p>Written values are plain strings in ASCII: {@code \\}, leading blanks, control characters and
 * every character above {@code ~} escaped ({@code \\uXXXX}), as FileInstall's own writer did, so the
 * file reads back as the same strings whatever the encoding FileInstall is set to.
 */
final class CfgFormat {
    private CfgFormat() {
    }

    /** One logical line: a comment or blank line (key null), or an entry. */
    private record Line(String raw, String key, String value) {
    }

    /** The file's keys and values as FileInstall reads them (the last one wins), before substitution. */
    static Map<String, String> parse(String text) {
        Map<String, String> m = new LinkedHashMap<>();
        for (Line l : lines(text)) {
            if (l.key != null) {
                m.put(l.key, l.value);
            }
        }
        return m;
    }

    /**
     * {@code text} rewritten to hold exactly {@code wanted}: a key whose value (substituted) is
     * unchanged keeps its lines, a changed one is written in place of its first line, a key no
     * longer wanted is dropped (comments stay), new keys are appended in order.
     */
    static String render(String text, Map<String, String> wanted, UnaryOperator<String> substitute) {
        StringBuilder out = new StringBuilder();
        Map<String, String> left = new LinkedHashMap<>(wanted);
        for (Line l : lines(text)) {
            if (l.key == null) {
                out.append(l.raw);
            } else if (left.containsKey(l.key)) {
                String v = left.remove(l.key);
                if (v.equals(substitute.apply(l.value))) {
                    out.append(l.raw);
                } else {
                    entry(out, l.key, v);
                }
            }
            // else: not wanted, or a repeated key already written: dropped
        }
        if (out.length() > 0 && out.charAt(out.length() - 1) != '\n') {
            out.append('\n');
        }
        left.forEach((k, v) -> entry(out, k, v));
        return out.toString();
    }

    /** {@code wanted} in the order to append new keys: {@code name} and {@code type} first, then sorted. */
    static Map<String, String> ordered(Map<String, String> props) {
        Map<String, String> m = new LinkedHashMap<>();
        for (String first : List.of(DefinitionCodec.NAME, DefinitionCodec.TYPE)) {
            if (props.containsKey(first)) {
                m.put(first, props.get(first));
            }
        }
        new TreeMap<>(props).forEach(m::putIfAbsent);
        return m;
    }

    private static void entry(StringBuilder out, String key, String value) {
        escape(out, key, true);
        out.append(" = ");
        escape(out, value, false);
        out.append('\n');
    }

    private static void escape(StringBuilder out, String s, boolean key) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '\\' -> out.append("\\\\");
                case '\t' -> out.append("\\t");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\f' -> out.append("\\f");
                case ' ' -> out.append(key || i == 0 ? "\\ " : " ");
                case '=', ':' -> out.append(key ? "\\" + c : String.valueOf(c));
                case '#', '!' -> out.append(key && i == 0 ? "\\" + c : String.valueOf(c));
                default -> {
                    if (c < 0x20 || c > 0x7e) {
                        out.append(String.format("\\u%04X", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
    }

    /** The logical lines of {@code text}, each with its raw text (line ends included). */
    private static List<Line> lines(String text) {
        List<Line> out = new ArrayList<>();
        int i = 0;
        while (i < text.length()) {
            int start = i;
            StringBuilder logical = new StringBuilder();
            boolean first = true;
            while (true) {
                int end = text.indexOf('\n', i);
                int next = end < 0 ? text.length() : end + 1;
                String phys = text.substring(i, end < 0 ? text.length() : end);
                if (phys.endsWith("\r")) {
                    phys = phys.substring(0, phys.length() - 1);
                }
                i = next;
                String content = first ? phys : stripLeading(phys);
                if (first && isCommentOrBlank(phys)) {
                    logical = null;
                    break;
                }
                first = false;
                if (trailingBackslashes(content) % 2 == 1 && i < text.length()) {
                    logical.append(content, 0, content.length() - 1);
                } else {
                    logical.append(trailingBackslashes(content) % 2 == 1 ? content.substring(0, content.length() - 1) : content);
                    break;
                }
            }
            String raw = text.substring(start, i);
            if (logical == null) {
                out.add(new Line(raw, null, null));
            } else {
                out.add(entry(raw, stripLeading(logical.toString())));
            }
        }
        return out;
    }

    private static Line entry(String raw, String s) {
        int k = 0;
        while (k < s.length()) {
            char c = s.charAt(k);
            if (c == '\\') {
                k += 2;
                continue;
            }
            if (c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f') {
                break;
            }
            k++;
        }
        k = Math.min(k, s.length());
        String key = unescape(s.substring(0, k));
        int v = k;
        while (v < s.length() && isBlank(s.charAt(v))) {
            v++;
        }
        if (v < s.length() && (s.charAt(v) == '=' || s.charAt(v) == ':')) {
            v++;
            while (v < s.length() && isBlank(s.charAt(v))) {
                v++;
            }
        }
        return new Line(raw, key, unescape(s.substring(v)));
    }

    private static String unescape(String s) {
        StringBuilder out = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c != '\\' || i + 1 == s.length()) {
                out.append(c);
                continue;
            }
            char n = s.charAt(++i);
            switch (n) {
                case 't' -> out.append('\t');
                case 'n' -> out.append('\n');
                case 'r' -> out.append('\r');
                case 'f' -> out.append('\f');
                case 'u' -> {
                    if (isHex(s, i + 1)) {
                        out.append((char) Integer.parseInt(s.substring(i + 1, i + 5), 16));
                        i += 4;
                    } else {
                        out.append('u');
                    }
                }
                default -> out.append(n);
            }
        }
        return out.toString();
    }

    private static boolean isHex(String s, int from) {
        if (from + 4 > s.length()) {
            return false;
        }
        for (int j = from; j < from + 4; j++) {
            if (Character.digit(s.charAt(j), 16) < 0) {
                return false;
            }
        }
        return true;
    }

    private static boolean isCommentOrBlank(String phys) {
        String s = stripLeading(phys);
        return s.isEmpty() || s.charAt(0) == '#' || s.charAt(0) == '!';
    }

    private static int trailingBackslashes(String s) {
        int n = 0;
        for (int j = s.length() - 1; j >= 0 && s.charAt(j) == '\\'; j--) {
            n++;
        }
        return n;
    }

    private static boolean isBlank(char c) {
        return c == ' ' || c == '\t' || c == '\f';
    }

    private static String stripLeading(String s) {
        int j = 0;
        while (j < s.length() && isBlank(s.charAt(j))) {
            j++;
        }
        return s.substring(j);
    }
}
