package dev.strata.shell.internal;

import java.lang.reflect.Field;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.apache.felix.service.command.CommandSession;

/**
 * Whether a Gogo session's command threads have finished. Gogo runs each command in a thread of
 * the session's own pool and, when a job is interrupted, reports it done while that thread is
 * still unwinding; Gogo's API has no way to wait for the thread, so this reads the pool (a
 * private field of gogo.runtime's session, as the console already reads gogo.jline's function
 * lists) and waits until no thread of it is busy.
 */
final class CommandThreads {

    private static final long POLL_MILLIS = 20;

    private CommandThreads() {
    }

    /**
     * Waits up to {@code seconds} until no command of the session runs; true if none does (or
     * the pool cannot be read, so there is nothing to wait on), false if one still runs.
     */
    static boolean awaitIdle(CommandSession session, long seconds) {
        ThreadPoolExecutor pool = pool(session);
        if (pool == null) {
            return true;
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (pool.getActiveCount() > 0) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            try {
                Thread.sleep(POLL_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
    }

    private static ThreadPoolExecutor pool(CommandSession session) {
        for (Class<?> c = session.getClass(); c != null; c = c.getSuperclass()) {
            try {
                Field f = c.getDeclaredField("executor");
                f.setAccessible(true);
                return f.get(session) instanceof ThreadPoolExecutor p ? p : null;
            } catch (NoSuchFieldException e) {
                // look in the superclass
            } catch (ReflectiveOperationException | RuntimeException e) {
                return null;
            }
        }
        return null;
    }
}
