package dev.strata.itests;

import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.fail;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.util.List;

import org.apache.felix.service.command.CommandProcessor;
import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Converter;
import org.osgi.framework.BundleContext;
import org.osgi.util.tracker.ServiceTracker;

import dev.strata.api.DeviceManager;

/**
 * A Gogo session for the shell ITs: opened once the command a test needs is registered and the
 * target types it builds with are up (bundles start asynchronously in Felix), so a test never
 * races the framework's start; runs a command and returns what the console would print, or
 * returns the exception a failing command hands the launcher.
 */
final class GogoSession implements AutoCloseable {

    private final CommandSession session;

    private GogoSession(CommandSession session) {
        this.session = session;
    }

    /**
     * Waits (60 s each) for the command {@code scope:function} and the target {@code types}, then
     * opens a session whose console output goes to {@code out}.
     */
    static GogoSession open(BundleContext context, CommandProcessor processor, DeviceManager manager, String command,
            OutputStream out, String... types) throws Exception {
        String[] name = command.split(":", 2);
        ServiceTracker<Object, Object> commands = new ServiceTracker<>(context, context.createFilter(
                "(&(osgi.command.scope=" + name[0] + ")(osgi.command.function=" + name[1] + "))"), null);
        commands.open();
        try {
            assertNotNull(name[0] + ": commands registered", commands.waitForService(60_000));
        } finally {
            commands.close();
        }
        List<String> wanted = List.of(types);
        Await.until("the " + String.join(", ", wanted) + " target types", 60, () -> manager.targetTypes().stream()
                .filter(t -> wanted.contains(t.type())).count() == wanted.size());
        return new GogoSession(processor.createSession(new ByteArrayInputStream(new byte[0]), new PrintStream(out, true),
                new PrintStream(new ByteArrayOutputStream())));
    }

    /** What the console prints for {@code command}. */
    String run(String command) throws Exception {
        Object result = session.execute(command);
        return result == null ? "" : session.format(result, Converter.INSPECT).toString();
    }

    /** A failing command: the exception Gogo hands the launcher, whose message it prints as one line. */
    Exception failure(String command) {
        try {
            Object r = session.execute(command);
            fail(command + " should fail, returned " + r);
            return null;
        } catch (Exception e) {
            return e;
        }
    }

    @Override
    public void close() {
        session.close();
    }
}
