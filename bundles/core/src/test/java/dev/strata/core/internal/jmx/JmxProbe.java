package dev.strata.core.internal.jmx;

import dev.strata.api.DeviceManager;
import dev.strata.api.StatusSource;
import java.util.Map;

/** Drives a {@link JmxPublisher} as Declarative Services would, in another JMX domain. */
public final class JmxProbe {
    private final JmxPublisher p;

    private JmxProbe(JmxPublisher p) {
        this.p = p;
    }

    public static JmxProbe start(String domain, DeviceManager manager, StatusSource source, String kind) {
        JmxPublisher p = new JmxPublisher(domain);
        p.manager = manager;
        p.addSource(source, Map.of(StatusSource.KIND, kind));
        p.activate();
        return new JmxProbe(p);
    }

    public void sync() {
        p.sync();
    }

    public void stop() throws InterruptedException {
        p.deactivate();
    }
}
