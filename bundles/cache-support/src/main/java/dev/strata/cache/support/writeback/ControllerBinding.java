package dev.strata.cache.support.writeback;

import dev.strata.api.InvalidArgumentException;
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
 * <p>The controller's own tunables are the cache's <em>settings</em> {@code writeback.<key>=<value>}
 * ({@link #set}): kept here, not in the cache's tunable table, so every cache passes them the same
 * way. Each reaches the controller as {@code <key>=<value>} with the cache's own controller
 * tunables ({@code writeback_threshold}), at every open (a rebind after the service went away and
 * came back opens the new session with them) and by {@code set} on the open session. They are in
 * {@link #status()} under their {@code writeback.<key>} names, so the device manager persists a
 * {@code cache:set} of one and re-applies it after a restart.
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
    /** The prefix of a controller setting: {@code writeback.<key>} reaches the controller as {@code <key>}. */
    public static final String SETTING_PREFIX = "writeback.";
    private static final java.util.regex.Pattern SETTING_KEY = java.util.regex.Pattern.compile("[a-z0-9_]{1,64}");

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
    /** The cache's controller settings (keys without the prefix); replaced whole, read by decide. */
    private volatile Map<String, String> settings = Map.of();
    private final Object settingsLock = new Object();
    /** The controller that last refused to open, and with which tunables. */
    private WritebackController refused;
    private Map<String, String> refusedWith = Map.of();

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
    public WritebackController.Decision decide(String wanted, Map<String, String> cacheTunables,
            WritebackController.CacheLoad load) {
        Map<String, String> tunables = mergedNow(cacheTunables);
        WritebackController c = lookup == null ? null : lookup.apply(wanted);
        if (c == null) {
            c = fallback;
        }
        WritebackController.Session s;
        synchronized (this) {
            if (c == refused && tunables.equals(refusedWith)) {
                // it refused these tunables: not asked again (and not logged again) until they change
                c = fallback;
            }
        }
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
                    refused = c;
                    refusedWith = Map.copyOf(tunables);
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

    /** Whether {@code key} names a controller setting ({@code writeback.<key>}, not {@code writeback.controller}). */
    public static boolean isSetting(String key) {
        return key != null && key.startsWith(SETTING_PREFIX) && !key.equals("writeback.controller")
                && !key.startsWith(SESSION_PREFIX);
    }

    /**
     * Sets the controller setting {@code key} ({@code writeback.<name>}) to {@code value}. When a
     * controller named {@code wanted} is installed (or {@code wanted} is the built-in) it checks the
     * key and the value now: a session is opened with every setting, given the new one by
     * {@code set} — a key it does not know ({@code set} returns false) is refused, so a typo is not
     * kept — and closed again (sessions hold no more than their own state). Otherwise the value is
     * kept and checked when that controller binds (a refused value then shows in
     * {@code writeback.controller.error} and the built-in paces). The next decision passes it on.
     *
     * @param type           the cache's type, for messages ({@code writeboost}, {@code writecache})
     * @param wanted         the cache's {@code writeback.controller} now
     * @param cacheTunables  the cache's own controller tunables (their keys cannot be set here)
     * @throws InvalidArgumentException a malformed key, a key that is the cache's own tunable, a key
     *         the controller does not know, or a value it refuses (one line; nothing changed)
     */
    public void set(String type, String wanted, Map<String, String> cacheTunables, String key, String value) {
        if (!isSetting(key)) {
            throw new InvalidArgumentException(type + ": " + key + " is not a controller setting; use writeback.<key>=<value>");
        }
        String k = key.substring(SETTING_PREFIX.length());
        if (!SETTING_KEY.matcher(k).matches()) {
            throw new InvalidArgumentException(type + ": " + key + " is not a controller setting; after writeback. "
                    + "use the controller's tunable name (lower-case letters, digits and '_', e.g. writeback.writeback_percent)");
        }
        if (cacheTunables.containsKey(k)) {
            throw new InvalidArgumentException(type + ": " + key + " is the cache's own tunable; use cache:set DEV "
                    + k + "=" + value);
        }
        String v = value == null ? "" : value.trim();
        if (v.isEmpty()) {
            throw new InvalidArgumentException(type + ": " + key + " needs a value; see docs/daemons.md for "
                    + "the controllers' tunables and their ranges");
        }
        synchronized (settingsLock) {
            Map<String, String> next = new LinkedHashMap<>(settings);
            next.put(k, v);
            WritebackController c = lookup == null ? null : lookup.apply(wanted);
            if (c == null && fallbackName.equals(wanted)) {
                c = fallback; // the cache asked for the built-in: it is always there to ask
            }
            if (c != null) {
                boolean known;
                WritebackController.Session probe;
                try {
                    probe = c.open(cache, merged(next, cacheTunables));
                } catch (RuntimeException e) {
                    throw refused(type, key, value, wanted, e);
                }
                try {
                    known = probe.set(k, v);
                } catch (RuntimeException e) {
                    throw refused(type, key, value, wanted, e);
                } finally {
                    probe.close();
                }
                if (!known) {
                    // a typo would otherwise be kept, persisted and passed on forever, doing nothing
                    throw new InvalidArgumentException(type + ": " + key + " is not a tunable of writeback controller "
                            + wanted + ", nothing changed; its tunables are listed in docs/daemons.md (for another"
                            + " controller's, set writeback.controller to it first)");
                }
            }
            settings = Map.copyOf(next);
        }
    }

    private static InvalidArgumentException refused(String type, String key, String value, String wanted, RuntimeException e) {
        return new InvalidArgumentException(type + ": " + key + "=" + value + " refused by controller " + wanted
                + ", nothing changed: " + e.getMessage());
    }

    /** The controller settings, keys without the prefix. */
    public Map<String, String> settings() {
        return settings;
    }

    // the writeback task's: the last merge, reused while neither side changed (no map per decision)
    private Map<String, String> mergedSettings = Map.of();
    private Map<String, String> mergedCache;
    private Map<String, String> merged;

    private Map<String, String> mergedNow(Map<String, String> cacheTunables) {
        Map<String, String> now = settings;
        if (now != mergedSettings || cacheTunables != mergedCache) {
            merged = merged(now, cacheTunables);
            mergedSettings = now;
            mergedCache = cacheTunables;
        }
        return merged;
    }

    /** The settings under the cache's own tunables (those win: they cannot be set as settings anyway). */
    private static Map<String, String> merged(Map<String, String> settings, Map<String, String> cacheTunables) {
        if (settings.isEmpty()) {
            return cacheTunables;
        }
        Map<String, String> m = new LinkedHashMap<>(settings);
        m.putAll(cacheTunables);
        return m;
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
     * {@link #status()}, but before the first decision (nothing bound yet) it names the controller
     * {@code wanted} binds to now: {@code pi} and {@code fallback=false} when a {@code pi} service
     * is installed. Without it a cache read "builtin, fallback=true" until its first writeback
     * decision, as if the controller it was given were missing.
     */
    public synchronized Map<String, String> status(String wanted) {
        Map<String, String> m = status();
        if (bound == null && wanted != null) {
            boolean there = fallbackName.equals(wanted) || (lookup != null && lookup.apply(wanted) != null);
            m.put(ACTIVE, there ? wanted : fallbackName);
            m.put(FALLBACK, Boolean.toString(!there));
        }
        return m;
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
        for (Map.Entry<String, String> e : new java.util.TreeMap<>(settings).entrySet()) {
            m.put(SETTING_PREFIX + e.getKey(), e.getValue());
        }
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
