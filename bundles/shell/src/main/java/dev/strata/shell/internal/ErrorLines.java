package dev.strata.shell.internal;

import java.io.InterruptedIOException;
import java.nio.channels.ClosedByInterruptException;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.felix.service.command.CommandSession;

/**
 * The one line printed for a failed line, by the console and (through {@link ErrorLineService})
 * by {@code bin/strata -c}: the error's message, never an exception class name or a stack trace
 * (the console's {@code e} command prints the last one for a bug report). For a command Gogo could
 * not call with the words given ({@code Cannot coerce tail(Token) to any of …}) the line says
 * which word is wrong and what is expected ({@link BadArguments}):
 * {@code error: log:tail: NUMBER "abc" is not a number; give the number of lines as a whole number, e.g. 20}.
 */
final class ErrorLines {

    private static final Pattern COERCE = Pattern.compile("^Cannot coerce ([\\w$]+)\\(.*");
    /** What Method.invoke says when Gogo converted a word to a type the parameter does not take. */
    private static final String TYPE_MISMATCH = "argument type mismatch";
    private static final Pattern NOT_FOUND = Pattern.compile("^Command not found: (\\S+)");

    /** The message of an error without one; the console's {@code e} prints its stack trace. */
    static final String NO_MESSAGE = "failed without a message (a bug: 'e' prints the details for a report)";

    static final String BARE_REFRESH = "error: refresh needs the bundle: refresh ID ('lb NAME' shows the ID)";

    private ErrorLines() {
    }

    /** {@code refresh} (or {@code felix:refresh}) with no bundle named. */
    static boolean bareRefresh(String line) {
        String s = line == null ? "" : line.strip();
        return s.equals("refresh") || s.equals("felix:refresh");
    }

    /** The line to print for {@code error}, raised by running {@code line}. */
    static String describe(Throwable error, String line, CommandSession session) {
        if (interrupted(error)) {
            return "interrupted";
        }
        if (bareRefresh(line)) {
            // Gogo's refresh without bundles dies of a NullPointerException: say what works
            return BARE_REFRESH;
        }
        String message = message(error);
        Matcher coerce = COERCE.matcher(message);
        if (coerce.matches()) {
            return "error: " + badArguments(session, line, coerce.group(1));
        }
        if (error instanceof IllegalArgumentException && message.equals(TYPE_MISMATCH)) {
            // Gogo took a number too large for an int as a long and then the method refused it
            return "error: " + badArguments(session, line, null);
        }
        Matcher notFound = NOT_FOUND.matcher(message);
        if (notFound.find()) {
            return "unknown command '" + notFound.group(1) + "': 'help' lists the commands";
        }
        return "error: " + message;
    }

    /** The message of the error (or of its first cause that has one), on one line. */
    static String message(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            String m = t.getMessage();
            // new RuntimeException(cause) takes cause.toString() ("java.io.IOException: …") as its message
            boolean wrapped = t.getCause() != null && t.getCause().toString().equals(m);
            if (m != null && !m.isBlank() && !wrapped) {
                return m.strip().replaceAll("\\s*\\R\\s*", " ");
            }
        }
        return NO_MESSAGE;
    }

    static boolean interrupted(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof InterruptedException || t instanceof ClosedByInterruptException
                    || (t instanceof InterruptedIOException && !(t instanceof java.net.SocketTimeoutException))) {
                return true;
            }
        }
        return false;
    }

    /**
     * Which word of the statement that called {@code function} (null: any) does not fit, or, if
     * that cannot be told, that the arguments are wrong and where the usage is: always one line.
     */
    static String badArguments(CommandSession session, String line, String function) {
        CommandInfo named = null;
        for (List<String> words : session == null ? List.<List<String>>of() : BadArguments.statements(line)) {
            CommandInfo info = words.get(0) == null ? null : CommandInfo.find(session, words.get(0));
            if (info == null || function != null && !info.function().equalsIgnoreCase(function)) {
                continue;
            }
            String why = BadArguments.explain(info, words.subList(1, words.size()));
            if (why != null) {
                return why;
            }
            named = info;
        }
        String name = named != null ? named.name : function != null ? function : BadArguments.firstCommand(line);
        return name + ": wrong or missing arguments; 'help " + name + "' shows the usage";
    }

    /** The command word of a simple statement ({@code dev:create a b} → {@code dev:create}). */
    static String firstWord(String line) {
        String s = line == null ? "" : line.strip();
        int end = 0;
        while (end < s.length() && !Character.isWhitespace(s.charAt(end)) && s.charAt(end) != ';' && s.charAt(end) != '|') {
            end++;
        }
        return end == 0 ? null : s.substring(0, end);
    }
}
