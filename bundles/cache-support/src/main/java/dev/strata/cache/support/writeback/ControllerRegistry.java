package dev.strata.cache.support.writeback;

import dev.strata.api.WritebackController;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link WritebackController} services a cache factory has seen, by their
 * {@value WritebackController#NAME} property (case-insensitive). A factory's dynamic DS reference
 * methods feed it; each cache's {@link ControllerBinding} looks its controller up through
 * {@link #get} on every decision, so a controller bundle can come, go and be updated under load.
 */
public final class ControllerRegistry {
    private static final Logger LOG = LoggerFactory.getLogger(ControllerRegistry.class);
    private final Map<String, WritebackController> byName = new ConcurrentHashMap<>();

    /**
     * A controller service appeared (its service properties in {@code props}). A service named
     * like the built-in fallback ({@value Modulator#NAME}) is not bound: that name always means the
     * cache's own controller, so {@code cache:stats} never shows it for two different things.
     */
    public void add(WritebackController c, Map<String, ?> props) {
        String n = name(props);
        if (Modulator.NAME.equals(n)) {
            LOG.warn("a writeback controller service named {} is ignored: that name is the caches' built-in controller",
                    n);
            return;
        }
        if (n != null) {
            byName.put(n, c);
        }
    }

    /** A controller service went away; a newer service of the same name is kept. */
    public void remove(WritebackController c, Map<String, ?> props) {
        String n = name(props);
        if (n != null) {
            byName.remove(n, c);
        }
    }

    /** The controller registered under {@code name}, or {@code null}. */
    public WritebackController get(String name) {
        return name == null ? null : byName.get(name.toLowerCase(Locale.ROOT));
    }

    private static String name(Map<String, ?> props) {
        Object n = props.get(WritebackController.NAME);
        return n == null ? null : n.toString().toLowerCase(Locale.ROOT);
    }
}
