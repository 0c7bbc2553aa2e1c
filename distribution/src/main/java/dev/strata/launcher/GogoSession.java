package dev.strata.launcher;

import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Collection;
import java.util.List;
import java.util.function.BiFunction;

import org.osgi.framework.BundleContext;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;

/**
 * A Gogo {@code CommandSession}, reached by reflection: the launcher lives on the class path,
 * outside the framework, so it cannot link against the gogo.runtime bundle's classes.
 */
final class GogoSession implements AutoCloseable {

    static final String PROCESSOR = "org.apache.felix.service.command.CommandProcessor";
    /** {@code Converter.INSPECT}: the level Gosh prints a command's result at. */
    private static final int INSPECT = 0;

    private final BundleContext context;
    private final ServiceReference<?> reference;
    private final Object session;
    private final Method execute;
    private final Method format;
    private final Method get;
    private final Method put;
    private final Method close;

    private GogoSession(BundleContext context, ServiceReference<?> reference, Object session) throws ReflectiveOperationException {
        this.context = context;
        this.reference = reference;
        this.session = session;
        Class<?> sessionType = reference.getBundle().loadClass("org.apache.felix.service.command.CommandSession");
        this.execute = sessionType.getMethod("execute", CharSequence.class);
        this.format = sessionType.getMethod("format", Object.class, int.class);
        this.get = sessionType.getMethod("get", String.class);
        this.put = sessionType.getMethod("put", String.class, Object.class);
        this.close = sessionType.getMethod("close");
    }

    /** Opens a session on the registered CommandProcessor, or returns null if there is none. */
    static GogoSession open(BundleContext context, InputStream in, OutputStream out, OutputStream err) throws Exception {
        ServiceReference<?> ref = context.getServiceReference(PROCESSOR);
        if (ref == null) {
            return null;
        }
        Object processor = context.getService(ref);
        if (processor == null) {
            return null;
        }
        Class<?> processorType = ref.getBundle().loadClass(PROCESSOR);
        Method create = processorType.getMethod("createSession", InputStream.class, OutputStream.class, OutputStream.class);
        Object session = invoke(create, processor, in, out, err);
        return new GogoSession(context, ref, session);
    }

    /** Runs one statement; returns its result; throws what the command threw. */
    Object execute(String statement) throws Exception {
        return invoke(execute, session, statement);
    }

    /** Sets a session variable (e.g. SCOPE). */
    void put(String name, Object value) throws Exception {
        invoke(put, session, name, value);
    }

    /** The result as Gosh prints it, or null for no output. */
    String format(Object result) throws Exception {
        if (result == null) {
            return null;
        }
        Object text = invoke(format, session, result, INSPECT);
        return text == null ? null : text.toString();
    }

    /**
     * Whether the processor knows a command: {@code scope:function}, or {@code function} in any
     * scope. Uses the session's {@code .commands} variable (the processor's command table).
     */
    boolean hasCommand(String name) {
        Object commands;
        try {
            commands = invoke(get, session, ".commands");
        } catch (Exception e) {
            return true; // cannot tell: do not wait
        }
        if (!(commands instanceof Collection<?> names)) {
            return true;
        }
        boolean scoped = name.indexOf(':') >= 0;
        for (Object n : names) {
            String s = String.valueOf(n);
            if (scoped ? s.equalsIgnoreCase(name) : s.substring(s.indexOf(':') + 1).equalsIgnoreCase(name)) {
                return true;
            }
        }
        return false;
    }

    /** The filter of the shell bundle's service that describes a failed statement in one line. */
    static final String ERROR_LINE = "(strata.error.line=true)";

    /**
     * The one line the shell bundle prints for {@code error} raised by {@code statement} (the
     * console's own rendering, e.g. which word a command could not take), or null without it.
     */
    @SuppressWarnings("unchecked")
    String errorLine(Throwable error, String statement) {
        try {
            ServiceReference<?>[] refs = context.getServiceReferences(BiFunction.class.getName(), ERROR_LINE);
            if (refs == null || refs.length == 0) {
                return null;
            }
            Object service = context.getService(refs[0]);
            try {
                if (service instanceof BiFunction<?, ?, ?> f) {
                    Object line = ((BiFunction<Object, Object, Object>) f).apply(error, List.of(statement, session));
                    return line == null ? null : line.toString();
                }
                return null;
            } finally {
                context.ungetService(refs[0]);
            }
        } catch (RuntimeException | InvalidSyntaxException e) {
            return null; // the shell bundle is stopping: the launcher's own line does
        }
    }

    @Override
    public void close() {
        try {
            invoke(close, session);
        } catch (Exception ignored) {
            // the framework may already be stopping
        }
        try {
            context.ungetService(reference);
        } catch (RuntimeException ignored) {
            // context no longer valid
        }
    }

    private static Object invoke(Method m, Object target, Object... args) throws Exception {
        try {
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof Exception ex) {
                throw ex;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw e;
        }
    }
}
