package dev.strata.shell.internal;

import java.io.IOException;
import java.io.PrintWriter;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Hashtable;
import java.util.concurrent.TimeUnit;
import java.util.List;
import java.util.function.Supplier;

import org.apache.felix.gogo.jline.Builtin;
import org.apache.felix.gogo.jline.Converters;
import org.apache.felix.gogo.jline.Parser;
import org.apache.felix.gogo.jline.Posix;
import org.apache.felix.gogo.jline.Procedural;
import org.apache.felix.service.command.CommandProcessor;
import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Converter;
import org.apache.felix.service.command.Job;
import org.jline.reader.EndOfFileException;
import org.jline.reader.LineReader;
import org.jline.reader.LineReaderBuilder;
import org.jline.reader.UserInterruptException;
import org.jline.terminal.Terminal;
import org.jline.terminal.TerminalBuilder;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;

import dev.strata.api.DeviceManager;

/**
 * The interactive console: a JLine {@link LineReader} (gogo.jline's parser, so quoting, braces and
 * pipes read as Gogo reads them) over the process's terminal, one Gogo session.
 *
 * <ul>
 * <li>History in {@code var/history}, kept across restarts; emacs line editing; Ctrl-L clears the
 * screen (JLine's default bindings).</li>
 * <li>Ctrl-C while a command runs interrupts that command's thread (Gogo's foreground job), never
 * the framework: the terminal takes SIGINT natively, so the JVM's default handler (which would
 * run the shutdown hook and stop Strata) never sees it. Ctrl-C at the prompt clears the line.
 * SIGTERM is untouched: it still stops Strata cleanly.</li>
 * <li>Errors are one line (see {@link ErrorLines}); {@code e} prints the last one's stack trace.</li>
 * <li>{@code exit} or Ctrl-D stops Strata (the framework), as the shell always did.</li>
 * </ul>
 *
 * gogo.jline's own bundle is installed but never started: its activator would open a second
 * console whose error lines carry exception class names. Its commands (Procedural: {@code each},
 * {@code if}, {@code try}; Posix: {@code cat}, {@code grep}, {@code tail}; Builtin:
 * {@code history}, {@code keymap}) and converters (a bundle id for {@code update}, {@code refresh})
 * are registered here instead, for the console's life.
 */
final class Console implements Runnable {

    /** Strata's scopes first (so {@code help} is strata:help), then Gogo's. */
    static final String SCOPE = "strata:dev:nbd:cache:mirror:feature:log:gogo:*";

    /** How long the console waits at start for the stack to be up before it says what is not. */
    static final long PROBLEMS_WAIT_SECONDS = 5;

    /** How long the console waits after Ctrl-C for the command to stop before the prompt. */
    static final long INTERRUPT_WAIT_SECONDS = 10;

    private final BundleContext context;
    private final CommandProcessor processor;
    private final Supplier<DeviceManager> devices;
    private final Path home;
    private final List<ServiceRegistration<?>> registrations = new ArrayList<>();
    private volatile Terminal terminal;
    private volatile boolean closing;
    /** Set by Ctrl-C while a command runs: the console waits for it before the next prompt. */
    private volatile boolean interruptSent;

    Console(BundleContext context, CommandProcessor processor, Supplier<DeviceManager> devices, Path home) {
        this.context = context;
        this.processor = processor;
        this.devices = devices;
        this.home = home;
    }

    @Override
    public void run() {
        try {
            registerGogoCommands();
            Terminal t = openTerminal();
            terminal = t;
            try (CommandSession session = processor.createSession(t.input(), t.output(), t.output())) {
                loop(t, session);
            }
        } catch (IOException | RuntimeException e) {
            if (!closing) {
                System.err.println("strata: the console failed: " + ErrorLines.message(e));
            }
        } finally {
            unregister();
            closeTerminal();
        }
        if (!closing) {
            stopFramework();
        }
    }

    /** Stops the console (bundle stopping): closes the terminal, which ends readLine. */
    void close() {
        closing = true;
        closeTerminal();
    }

    private Terminal openTerminal() throws IOException {
        // JLine finds its terminal providers through the thread's context class loader, which in a
        // framework started from the class path is the launcher's: point it at JLine's bundle
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        thread.setContextClassLoader(TerminalBuilder.class.getClassLoader());
        try {
            return TerminalBuilder.builder().name("strata").system(true).dumb(true).nativeSignals(true)
                    .signalHandler(Terminal.SignalHandler.SIG_IGN).build();
        } finally {
            thread.setContextClassLoader(previous);
        }
    }

    private void loop(Terminal t, CommandSession session) throws IOException {
        session.put("SCOPE", SCOPE);
        session.put(".context", context);
        try {
            session.execute("e = { $exception printStackTrace }");
        } catch (Exception e) {
            // no 'e' alias: the console still works
        }
        LineReader reader = LineReaderBuilder.builder()
                .terminal(t)
                .appName("strata")
                .parser(new Parser())
                .completer(new ConsoleCompleter(session, devices))
                .variable(LineReader.HISTORY_FILE, home.resolve("var/history"))
                .variable(LineReader.HISTORY_SIZE, 1000)
                .variable(LineReader.HISTORY_FILE_SIZE, 1000)
                .build();
        reader.setOpt(LineReader.Option.AUTO_FRESH_LINE);
        session.put(".reader", reader);
        session.put(".terminal", t);
        PrintWriter out = t.writer();
        printMotd(out);
        printProblems(session, out);
        boolean tty = !Terminal.TYPE_DUMB.equals(t.getType()) && !Terminal.TYPE_DUMB_COLOR.equals(t.getType());
        String prompt = tty ? "strata> " : "";
        // Ctrl-C while a command runs: interrupt it (its thread), never the framework
        t.handle(Terminal.Signal.INT, s -> {
            Job job = session.foregroundJob();
            if (job != null) {
                interruptSent = true;
                job.interrupt();
            }
        });
        try {
            while (!closing) {
                String line;
                try {
                    line = reader.readLine(prompt);
                } catch (UserInterruptException e) {
                    continue; // Ctrl-C at the prompt: drop the line
                } catch (EndOfFileException e) {
                    break; // Ctrl-D or end of piped input
                }
                String statement = line.strip();
                if (statement.isEmpty() || statement.startsWith("#")) {
                    continue;
                }
                if (statement.equals("exit") || statement.equals("quit")) {
                    break;
                }
                execute(session, statement, out);
            }
        } finally {
            try {
                reader.getHistory().save();
            } catch (IOException e) {
                out.println("strata: cannot save the history to " + home.resolve("var/history") + ": " + e.getMessage());
            }
            out.flush();
        }
    }

    private void execute(CommandSession session, String statement, PrintWriter out) {
        try {
            Object result;
            try {
                result = session.execute(statement);
            } finally {
                awaitInterruptedCommand(session, out);
            }
            session.put("_", result);
            if (result != null) {
                CharSequence text = session.format(result, Converter.INSPECT);
                if (text != null && text.length() > 0) {
                    String t = text.toString();
                    out.println(t.endsWith("\n") ? t.substring(0, t.length() - 1) : t);
                }
            }
        } catch (Exception | LinkageError e) {
            session.put("exception", e);
            out.println(ErrorLines.describe(e, statement, session));
        } finally {
            Thread.interrupted(); // an interrupt meant for the command must not end the console
            out.flush();
        }
    }

    /**
     * After Ctrl-C, Gogo's job returns at once while the command's own thread is still stopping
     * (a cancelled writeback prints how far it got): wait for it, bounded, so that what it prints
     * comes before the prompt and not across the next line.
     */
    private void awaitInterruptedCommand(CommandSession session, PrintWriter out) {
        if (!interruptSent) {
            return;
        }
        interruptSent = false;
        if (!CommandThreads.awaitIdle(session, INTERRUPT_WAIT_SECONDS)) {
            out.println("strata: the interrupted command has not stopped within " + INTERRUPT_WAIT_SECONDS
                    + " s; it may still print");
        }
    }

    /**
     * What is configured but not up, as {@code bin/strata --daemon} reports it; waits a little
     * (exports start a moment after their devices) but the console starts anyway.
     */
    private void printProblems(CommandSession session, PrintWriter out) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(PROBLEMS_WAIT_SECONDS);
        List<?> problems = List.of();
        try {
            while (!closing) {
                Object r = session.execute(HealthCommand.COMMAND);
                problems = r instanceof List<?> l ? l : List.of();
                if (problems.isEmpty() || System.nanoTime() - deadline > 0) {
                    break;
                }
                Thread.sleep(100);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            problems = List.of("cannot tell whether the stack is up: " + ErrorLines.message(e));
        }
        for (Object p : problems) {
            out.println("strata: " + p);
        }
        out.flush();
    }

    private void printMotd(PrintWriter out) {
        Path motd = home.resolve("etc/motd");
        try {
            if (Files.isRegularFile(motd)) {
                out.print(Files.readString(motd));
            }
        } catch (IOException ignored) {
            // no message of the day
        }
        out.flush();
    }

    /** gogo.jline's commands, registered as gogo.jline's activator would (scope {@code gogo}). */
    private void registerGogoCommands() {
        // converters: "30" to a Bundle for update/refresh/start …, results formatted for the terminal
        registrations.add(context.registerService(Converter.class.getName(),
                new Converters(context.getBundle(0).getBundleContext()), null));
        register(new Builtin(), Builtin.class);
        register(new Procedural(), Procedural.class);
        register(new Posix(processor), Posix.class);
    }

    private void register(Object commands, Class<?> type) {
        String[] functions;
        try {
            // the function lists are package-private constants of gogo.jline
            Field f = type.getDeclaredField("functions");
            f.setAccessible(true);
            functions = (String[]) f.get(null);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return; // a gogo.jline without these commands: the console still works
        }
        Hashtable<String, Object> props = new Hashtable<>();
        props.put(CommandProcessor.COMMAND_SCOPE, "gogo");
        props.put(CommandProcessor.COMMAND_FUNCTION, functions);
        registrations.add(context.registerService(type.getName(), commands, props));
    }

    private void unregister() {
        for (ServiceRegistration<?> r : registrations) {
            try {
                r.unregister();
            } catch (IllegalStateException ignored) {
                // already gone with the bundle
            }
        }
        registrations.clear();
    }

    private void closeTerminal() {
        Terminal t = terminal;
        if (t != null) {
            try {
                t.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }

    private void stopFramework() {
        try {
            context.getBundle(0).stop();
        } catch (Exception e) {
            System.err.println("strata: cannot stop: " + ErrorLines.message(e));
        }
    }
}
