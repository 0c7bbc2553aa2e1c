package dev.strata.cache.support.writeback;

import dev.strata.api.WritebackController;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A cache's binding to its {@link WritebackController}: by name, dynamic, with a built-in
 * fallback (the {@link Modulator}) while no service of that name is registered, so the bundle
 * providing controllers can be updated under load.
 *
 * <p>The binding holds ONE {@link WritebackController.Session} at a time, for the controller in
 * use. At each {@link #decide} it looks the wanted name up again; when the service found differs
 * from the one the session belongs to (registered, gone, replaced by an update of its bundle,
 * another name wanted) the old session is closed and one is opened on the new controller with
 * the cache's current controller tunables. Tunables changed since are passed to the open session
 * with {@code set}. A controller that throws from {@code decide} is not trusted for that decision:
 * the fallback's session decides instead, and the failure shows in {@link #status()}.
 *
 * <p>The fallback is called {@value Modulator#NAME} in {@value #ACTIVE}; {@value #FALLBACK} is
 * {@code true} while it stands in for a missing controller, {@code false} when the cache asked
 * for {@code builtin} itself. Each switch is logged once (fell back / bound).
 *
 * <p>Called by the cache's writeback task (one thread at a time, as the session contract asks);
 * {@link #status()} may be called from any thread.
 */
public final class ControllerBinding implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ControllerBinding.class);
    /** Status keys (the wanted name is the cache's own {@code writeback.controller} tunable). */
    public static final String ACTIVE = "writeback.controller.active";
    public static final String FALLBACK = "writeback.controller.fallback";
    /** Sessions opened so far: one more each time the cache bound another service (or the built-in). */
    public static final String SESSIONS = "writeback.controller.sessions";
    public static final String SESSION_PREFIX = "writeback.controller.";

    private final String cache;
    private final Function<String, WritebackController> lookup;
    private final WritebackController fallback;
    private final String fallbackName;

    // ---- the writeback task's (guarded by this for status) ----
    private WritebackController bound;
    private String boundName;
    private String wantedName;
    private WritebackController.Session session;
    private Map<String, String> applied = Map.of();
    private WritebackController.Session fallbackSession;
    private Map<String, String> fallbackApplied = Map.of();
    private String lastError = "";
    /** The session whose grant the cache is writing back now (wroteBack goes to it, once). */
    private WritebackController.Session lastDecider;
    private long reopened;

    /**
     * @param cache    the cache's name (passed to {@code open})
     * @param lookup   the controller services registered now, by name (null result: none); may be null
     * @param fallback the built-in controller used while none of the wanted name is available
     */
    public ControllerBinding(String cache, Function<String, WritebackController> lookup,
            WritebackController fallback, String fallbackName) {
        this.cache = cache;
        this.lookup = lookup;
        this.fallback = Objects.requireNonNull(fallback);
        this.fallbackName = fallbackName;
    }

    /** The built-in modulator as fallback. */
    public static ControllerBinding withModulator(String cache, Function<String, WritebackController> lookup) {
        return new ControllerBinding(cache, lookup, Modulator.INSTANCE, Modulator.NAME);
    }

    /**
     * Asks the controller named {@code wanted} (or the fallback) what the cache may write back now.
     *
     * @param tunables the cache's controller tunables now (keys without the {@code writeback.} prefix)
     */
    public WritebackController.Decision decide(String wanted, Map<String, String> tunables,
            WritebackController.CacheLoad load) {
        WritebackController c = lookup == null ? null : lookup.apply(wanted);
        if (c == null) {
            c = fallback;
        }
        WritebackController.Session s;
        synchronized (this) {
            wantedName = wanted;
            if (c != bound || session == null) {
                if (bound != null || c != fallback) {
                    if (c == fallback && !fallbackName.equals(wanted)) {
                        LOG.info("{}: writeback controller {} is not available; the cache's built-in controller ({}) paces writeback",
                                cache, wanted, fallbackName);
                    } else if (c != fallback) {
                        LOG.info("{}: writeback paced by controller {}", cache, wanted);
                    }
                }
                closeSession();
                boundName = c == fallback ? fallbackName : wanted;
                s = open(c, tunables);
                if (s == null) {
                    c = fallback;
                    boundName = fallbackName;
                    s = open(c, tunables);
                }
                bound = c;
                session = s;
                applied = Map.copyOf(tunables);
                reopened++;
            } else {
                s = session;
                applied = apply(s, applied, tunables);
            }
        }
        try {
            WritebackController.Decision d = s.decide(load);
            synchronized (this) {
                lastDecider = s;
            }
            return d;
        } catch (RuntimeException e) {
            if (c == fallback) {
                throw e;
            }
            synchronized (this) {
                lastError = boundName + ": " + e.getMessage();
            }
            LOG.warn("{}: writeback controller {} failed, the built-in {} decides: {}", cache, boundName,
                    fallbackName, e.toString());
            WritebackController.Session f = fallbackSession(tunables);
            WritebackController.Decision d = f.decide(load);
            synchronized (this) {
                lastDecider = f;
            }
            return d;
        }
    }

    /**
     * Tells the session that made the last decision what the cache wrote back for it (see
     * {@link WritebackController.Session#wroteBack}); once per decision, nothing if the session
     * has been replaced since.
     */
    public void wroteBack(long blocks, long nanoTime) {
        WritebackController.Session s;
        synchronized (this) {
            s = lastDecider;
            lastDecider = null;
        }
        if (s == null) {
            return;
        }
        try {
            s.wroteBack(blocks, nanoTime);
        } catch (RuntimeException e) {
            synchronized (this) {
                lastError = boundName + ": " + e.getMessage();
            }
        }
    }

    private WritebackController.Session open(WritebackController c, Map<String, String> tunables) {
        try {
            return c.open(cache, tunables);
        } catch (RuntimeException e) {
            if (c == fallback) {
                throw e;
            }
            lastError = boundName + ": " + e.getMessage();
            LOG.warn("{}: cannot open writeback controller {}: {}", cache, boundName, e.toString());
            return null;
        }
    }

    private synchronized WritebackController.Session fallbackSession(Map<String, String> tunables) {
        if (fallbackSession == null) {
            fallbackSession = fallback.open(cache, tunables);
            fallbackApplied = Map.copyOf(tunables);
        } else {
            fallbackApplied = apply(fallbackSession, fallbackApplied, tunables);
        }
        return fallbackSession;
    }

    /** Passes tunables that changed since {@code applied} to {@code s}; returns what is applied now. */
    private Map<String, String> apply(WritebackController.Session s, Map<String, String> applied,
            Map<String, String> now) {
        if (applied.equals(now)) {
            return applied;
        }
        for (Map.Entry<String, String> e : now.entrySet()) {
            if (!e.getValue().equals(applied.get(e.getKey()))) {
                try {
                    s.set(e.getKey(), e.getValue());
                } catch (RuntimeException ex) {
                    lastError = boundName + ": " + ex.getMessage();
                }
            }
        }
        return Map.copyOf(now);
    }

    private void closeSession() {
        lastDecider = null;
        if (session != null) {
            try {
                session.close();
            } catch (RuntimeException e) {
                LOG.warn("{}: closing the session of writeback controller {}: {}", cache, boundName, e.toString());
            }
            session = null;
        }
    }

    /** The name of the controller in use (the fallback's until the first decision). */
    public synchronized String active() {
        return boundName == null ? fallbackName : boundName;
    }

    /** Whether the built-in stands in for a controller that is not available (false if it was asked for). */
    public synchronized boolean usingFallback() {
        return (bound == null || bound == fallback) && !fallbackName.equals(wantedName);
    }

    /** Sessions opened so far (one more each time the controller service changed). */
    public synchronized long sessionsOpened() {
        return reopened;
    }

    /**
     * {@value #ACTIVE}, {@value #FALLBACK}, {@value #SESSIONS}, then the session's status keys prefixed with
     * {@value #SESSION_PREFIX}, and {@code writeback.controller.error} after a failure.
     */
    public synchronized Map<String, String> status() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put(ACTIVE, active());
        m.put(FALLBACK, Boolean.toString(usingFallback()));
        m.put(SESSIONS, Long.toString(reopened));
        if (session != null) {
            try {
                for (Map.Entry<String, String> e : session.status().entrySet()) {
                    m.putIfAbsent(SESSION_PREFIX + e.getKey(), e.getValue());
                }
            } catch (RuntimeException e) {
                lastError = boundName + ": " + e.getMessage();
            }
        }
        if (!lastError.isEmpty()) {
            m.put(SESSION_PREFIX + "error", lastError);
        }
        return m;
    }

    /** Closes the session (the cache is closing). */
    @Override
    public synchronized void close() {
        closeSession();
        bound = null;
        boundName = null;
        if (fallbackSession != null) {
            fallbackSession.close();
            fallbackSession = null;
        }
    }
}
