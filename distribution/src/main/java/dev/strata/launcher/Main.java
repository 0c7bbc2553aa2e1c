package dev.strata.launcher;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code bin/strata}: starts Felix from {@code conf/config.properties} and then either hands the
 * console to the Gogo shell (no arguments), runs {@code -c} commands and stops, or runs as a
 * daemon until SIGTERM/SIGINT.
 *
 * <p>Exit codes: 0 success; 1 a command failed (its message is the one line on stderr);
 * 2 bad launcher arguments; 3 the framework could not start; 124 the {@code --timeout} watchdog
 * fired; 130/143 interrupted by SIGINT/SIGTERM during {@code -c}.
 */
public final class Main {

    static final String USAGE = String.join("\n",
            "usage: strata [-c \"cmd; cmd\"] [--daemon] [--no-default-stack] [--timeout SECONDS]",
            "  (no arguments)       interactive Gogo shell with the default stack running",
            "  -c \"cmd; cmd\"        run the commands, print each result, stop; exit non-zero on the first failure",
            "  --daemon             keep running without a shell until SIGTERM/SIGINT (after the -c commands, if any)",
            "  --no-default-stack   do not load the default stack shipped in deploy/ (strata.default.stack)",
            "  --timeout SECONDS    -c only: stop and exit 124 if the commands have not finished by then (default 3600)",
            "environment: JAVA_HOME, JAVA_OPTS, STRATA_NO_DEFAULT_STACK=1, STRATA_TIMEOUT=SECONDS");

    /** The process's streams, taken before Gogo's ThreadIO replaces System.out/err/in. */
    static final PrintStream STDOUT = System.out;
    static final PrintStream STDERR = System.err;

    /** Set by bin/strata when it was started by socket activation (the socket is descriptor 0). */
    static final String SOCKET_ACTIVATION = "strata.socket.activation";

    private Main() {
    }

    public static void main(String[] args) {
        int code;
        try {
            code = run(args);
        } catch (UsageException e) {
            STDERR.println("strata: " + e.getMessage());
            STDERR.println(USAGE);
            code = 2;
        } catch (StartupException e) {
            STDERR.println("strata: " + e.getMessage());
            code = 3;
        }
        STDOUT.flush();
        STDERR.flush();
        System.exit(code);
    }

    static int run(String[] args) throws UsageException, StartupException {
        Options options = Options.parse(args, System.getenv());
        if (options.help) {
            STDOUT.println(USAGE);
            return 0;
        }
        if (Boolean.getBoolean(SOCKET_ACTIVATION) && !options.daemon) {
            // bin/strata made the inherited socket our stdin: no console or script can read it
            STDERR.println("strata: socket activation: start Strata with --daemon (the inherited socket is its standard input)");
            return 2;
        }
        Path home = Paths.get(System.getProperty("strata.home", ".")).toAbsolutePath().normalize();
        StrataFramework framework = new StrataFramework(home, options);
        framework.start();
        if (options.interactive()) {
            return framework.awaitStop();
        }
        return framework.runCommands();
    }

    private static final Pattern COERCE = Pattern.compile("^Cannot coerce ([\\w$]+)\\(.*");
    private static final Pattern NOT_FOUND = Pattern.compile("^Command not found: (\\S+)");

    /**
     * One line for a failed command: its message (or its first cause's), never an exception class
     * name; Gogo's "Command not found: x" as "unknown command 'x'".
     */
    static String describe(Throwable t) {
        String message = null;
        for (Throwable c = t; c != null && message == null; c = c.getCause()) {
            String m = c.getMessage();
            // new RuntimeException(cause) takes cause.toString() ("java.io.IOException: …") as its message
            boolean wrapped = c.getCause() != null && c.getCause().toString().equals(m);
            if (m != null && !m.isBlank() && !wrapped) {
                message = m;
            }
        }
        if (message == null) {
            message = "failed without a message (a bug: please report the command)";
        }
        message = message.strip().replaceAll("\\s*\\R\\s*", " ");
        Matcher notFound = NOT_FOUND.matcher(message);
        if (notFound.find()) {
            return "unknown command '" + notFound.group(1) + "': 'help' lists the commands";
        }
        return message;
    }

    static void printFailure(PrintStream err, Throwable t) {
        err.println("error: " + describe(t));
        err.flush();
    }

    /**
     * The one line for a failed {@code -c} statement, as the console prints it: the shell bundle
     * renders it (its {@code ErrorLines}: e.g. {@code error: nbd:export: --port "abc" is not a
     * number; …} for a word Gogo could not convert); without that bundle, this class's own line.
     */
    static void printFailure(PrintStream err, Throwable t, GogoSession session, String statement) {
        String line = session.errorLine(t, statement);
        if (line != null && !line.isBlank()) {
            line = line.strip().replaceAll("\\s*\\R\\s*", " ");
            err.println(line.startsWith("error: ") ? line : "error: " + line);
            err.flush();
            return;
        }
        String bare = statement == null ? "" : statement.strip();
        if (bare.equals("refresh") || bare.equals("felix:refresh")) {
            // Gogo's refresh without bundles dies of a NullPointerException: say what works
            err.println("error: refresh needs the bundle: refresh ID ('lb NAME' shows the ID)");
            err.flush();
            return;
        }
        String message = t.getMessage() == null ? "" : t.getMessage();
        Matcher coerce = COERCE.matcher(message);
        String command = CommandSplitter.commandName(statement);
        if (coerce.matches()) {
            String name = command != null ? command : coerce.group(1);
            err.println("error: " + name + ": wrong or missing arguments; 'help " + name + "' shows the usage");
            err.flush();
            return;
        }
        printFailure(err, t);
    }

    static void writePidFile(Path file) {
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, ProcessHandle.current().pid() + "\n", StandardCharsets.US_ASCII);
        } catch (IOException e) {
            STDERR.println("strata: cannot write " + file + ": " + e.getMessage());
        }
    }

    /** Command-line options. */
    static final class Options {
        final List<String> scripts = new ArrayList<>();
        boolean daemon;
        boolean noDefaultStack;
        long timeoutSeconds = 3600;
        boolean help;

        boolean interactive() {
            return scripts.isEmpty() && !daemon;
        }

        String script() {
            return String.join("\n", scripts);
        }

        static Options parse(String[] args, Map<String, String> env) throws UsageException {
            Options o = new Options();
            String envNoDefault = env.get("STRATA_NO_DEFAULT_STACK");
            if (envNoDefault != null && !envNoDefault.isBlank()
                    && !List.of("0", "false", "no").contains(envNoDefault.trim().toLowerCase(Locale.ROOT))) {
                o.noDefaultStack = true;
            }
            String envTimeout = env.get("STRATA_TIMEOUT");
            if (envTimeout != null && !envTimeout.isBlank()) {
                o.timeoutSeconds = parseTimeout(envTimeout, "STRATA_TIMEOUT");
            }
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                switch (a) {
                    case "-c", "--command" -> {
                        if (i + 1 >= args.length) {
                            throw new UsageException(a + " needs the commands to run, e.g. -c \"dev:list\"");
                        }
                        o.scripts.add(args[++i]);
                    }
                    case "--daemon", "-d" -> o.daemon = true;
                    case "--no-default-stack" -> o.noDefaultStack = true;
                    case "--timeout" -> {
                        if (i + 1 >= args.length) {
                            throw new UsageException("--timeout needs a number of seconds");
                        }
                        o.timeoutSeconds = parseTimeout(args[++i], "--timeout");
                    }
                    case "-h", "--help" -> o.help = true;
                    default -> throw new UsageException("unknown argument '" + a + "'");
                }
            }
            return o;
        }

        private static long parseTimeout(String v, String what) throws UsageException {
            try {
                long s = Long.parseLong(v.trim());
                if (s <= 0) {
                    throw new NumberFormatException();
                }
                return s;
            } catch (NumberFormatException e) {
                throw new UsageException(what + " must be a positive number of seconds, not '" + v + "'");
            }
        }
    }

    static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        UsageException(String message) {
            super(message);
        }
    }

    static final class StartupException extends Exception {
        private static final long serialVersionUID = 1L;

        StartupException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
