package dev.strata.launcher;

import java.util.ArrayList;
import java.util.List;

/**
 * Splits a {@code -c} script into top-level commands, so each one's result can be printed and its
 * failure reported on its own. Separators are {@code ;} and newlines outside quotes ({@code '…'},
 * {@code "…"}), brackets ({@code {…}}, {@code (…)}, {@code […]}) and backslash escapes; that is the
 * Gogo grammar's own notion of a statement boundary. Empty statements and {@code #} comment lines
 * are dropped.
 */
public final class CommandSplitter {

    private CommandSplitter() {
    }

    public static List<String> split(String script) {
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        int depth = 0;
        char quote = 0;
        boolean atLineStart = true;
        for (int i = 0; i < script.length(); i++) {
            char c = script.charAt(i);
            if (quote != 0) {
                cur.append(c);
                if (c == '\\' && quote == '"' && i + 1 < script.length()) {
                    cur.append(script.charAt(++i));
                } else if (c == quote) {
                    quote = 0;
                }
                continue;
            }
            if (atLineStart && depth == 0 && c == '#' && cur.toString().isBlank()) {
                // comment up to end of line
                while (i + 1 < script.length() && script.charAt(i + 1) != '\n') {
                    i++;
                }
                continue;
            }
            switch (c) {
                case '\\':
                    cur.append(c);
                    if (i + 1 < script.length()) {
                        cur.append(script.charAt(++i));
                    }
                    break;
                case '\'':
                case '"':
                    quote = c;
                    cur.append(c);
                    break;
                case '{':
                case '(':
                case '[':
                    depth++;
                    cur.append(c);
                    break;
                case '}':
                case ')':
                case ']':
                    depth = Math.max(0, depth - 1);
                    cur.append(c);
                    break;
                case ';':
                case '\n':
                    if (depth == 0) {
                        add(out, cur);
                        atLineStart = true;
                        continue;
                    }
                    cur.append(c);
                    break;
                default:
                    cur.append(c);
            }
            if (!Character.isWhitespace(c)) {
                atLineStart = false;
            }
        }
        add(out, cur);
        return out;
    }

    private static void add(List<String> out, StringBuilder cur) {
        String s = cur.toString().strip();
        if (!s.isEmpty()) {
            out.add(s);
        }
        cur.setLength(0);
    }

    /**
     * The command name a statement starts with ({@code dev:create} or {@code create}), or null if
     * it does not start with a plain command word (an assignment, a closure, a variable).
     */
    public static String commandName(String statement) {
        int end = 0;
        while (end < statement.length() && !Character.isWhitespace(statement.charAt(end))) {
            end++;
        }
        String word = statement.substring(0, end);
        if (!word.matches("([A-Za-z_][\\w.-]*:)?[A-Za-z_][\\w.-]*")) {
            return null;
        }
        // `x = value` is an assignment, not a command
        String rest = statement.substring(end).stripLeading();
        if (rest.startsWith("=") && !rest.startsWith("==")) {
            return null;
        }
        return word;
    }
}
