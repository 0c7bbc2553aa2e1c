package dev.strata.shell.internal;

import java.io.InterruptedIOException;
import java.nio.channels.ClosedByInterruptException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.felix.service.command.CommandSession;

/**
 * What the console prints for a failed line: the error's message on one line, never an exception
 * class name or a stack trace (the {@code e} command prints the last one for a bug report); a
 * command called with missing or wrong arguments prints its usage instead of Gogo's
 * {@code Cannot coerce create(Token) to any of …}.
 */
final class ErrorLines {

    private static final Pattern COERCE = Pattern.compile("^Cannot coerce ([\\w$]+)\\(.*");
    private static final Pattern NOT_FOUND = Pattern.compile("^Command not found: (\\S+)");

    static final String BARE_REFRESH = "error: refresh needs the bundle: refresh ID ('lb NAME' shows the ID)";

    private ErrorLines() {
    }

    /** {@code refresh} (or {@code felix:refresh}) with no bundle named. */
    static boolean bareRefresh(String line) {
        String s = line == null ? "" : line.strip();
        return s.equals("refresh") || s.equals("felix:refresh");
    }

    /** The lines to print for {@code error}, raised by running {@code line}. */
    static List<String> describe(Throwable error, String line, CommandSession session) {
        if (interrupted(error)) {
            return List.of("interrupted");
        }
        if (bareRefresh(line)) {
            // Gogo's refresh without bundles dies of a NullPointerException: say what works
            return List.of(BARE_REFRESH);
        }
        String message = message(error);
        Matcher coerce = COERCE.matcher(message);
        if (coerce.matches()) {
            return usage(session, line, coerce.group(1));
        }
        Matcher notFound = NOT_FOUND.matcher(message);
        if (notFound.find()) {
            return List.of("unknown command '" + notFound.group(1) + "': 'help' lists the commands");
        }
        return List.of("error: " + message);
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
        return "failed without a message (a bug: 'e' prints the details for a report)";
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

    private static List<String> usage(CommandSession session, String line, String function) {
        String word = firstWord(line);
        CommandInfo info = word == null ? null : CommandInfo.find(session, word);
        if (info == null || !info.name.substring(info.name.indexOf(':') + 1).equalsIgnoreCase(function)) {
            info = CommandInfo.find(session, function);
        }
        if (info == null) {
            return List.of("error: wrong or missing arguments for " + function + "; 'help " + function + "' shows its usage");
        }
        List<String> out = new ArrayList<>();
        out.add(info.name + ": wrong or missing arguments");
        out.addAll(info.usage());
        return out;
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
