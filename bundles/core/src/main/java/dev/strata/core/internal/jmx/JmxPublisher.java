package dev.strata.core.internal.jmx;

import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceManager;
import dev.strata.api.StatusSource;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes every device's status (a cache's counters and latency percentiles are part of it)
 * and every {@link StatusSource} entry (NBD exports) as MBeans on the platform MBean server:
 * {@code dev.strata:type=Device,name=wb0}, {@code dev.strata:type=Export,name=wb0}. Attribute
 * values are read when asked for; which MBeans exist follows the devices and exports, checked
 * every {@value #SYNC_SECONDS} s by one thread, stopped with the component.
 */
@Component(immediate = true)
public final class JmxPublisher {
    private static final Logger LOG = LoggerFactory.getLogger(JmxPublisher.class);
    static final int SYNC_SECONDS = 2;
    public static final String DOMAIN = "dev.strata";

    @Reference
    DeviceManager manager;

    private final Map<StatusSource, String> sources = new ConcurrentHashMap<>();
    private final Set<ObjectName> registered = new HashSet<>();
    private final String domain;
    private MBeanServer server;
    private ScheduledExecutorService timer;

    public JmxPublisher() {
        this(DOMAIN);
    }

    /** For tests: another domain, so parallel tests never meet. */
    JmxPublisher(String domain) {
        this.domain = domain;
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC)
    void addSource(StatusSource s, Map<String, Object> props) {
        Object kind = props.get(StatusSource.KIND);
        sources.put(s, kind == null ? "Status" : kind.toString());
    }

    void removeSource(StatusSource s) {
        sources.remove(s);
    }

    @Activate
    void activate() {
        server = ManagementFactory.getPlatformMBeanServer();
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "strata-jmx");
            t.setDaemon(true);
            return t;
        });
        timer.scheduleWithFixedDelay(this::syncQuietly, 0, SYNC_SECONDS, TimeUnit.SECONDS);
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        timer.shutdownNow();
        timer.awaitTermination(10, TimeUnit.SECONDS);
        synchronized (this) {
            for (ObjectName n : registered) {
                unregister(n);
            }
            registered.clear();
        }
    }

    private void syncQuietly() {
        try {
            sync();
        } catch (RuntimeException e) {
            LOG.warn("publishing Strata's MBeans failed: {}", e.toString());
        }
    }

    /** Registers an MBean for every device and status entry that has none, unregisters the gone ones. */
    synchronized void sync() {
        Map<ObjectName, StatusBean> wanted = new LinkedHashMap<>();
        for (DeviceInfo d : manager.list()) {
            String name = d.name();
            wanted.put(name("Device", name), new StatusBean("Strata device " + name, () -> deviceStatus(name)));
        }
        for (Map.Entry<StatusSource, String> s : sources.entrySet()) {
            StatusSource src = s.getKey();
            for (String name : src.statuses().keySet()) {
                wanted.put(name(s.getValue(), name), new StatusBean("Strata " + s.getValue() + " " + name,
                        () -> src.statuses().getOrDefault(name, Map.of())));
            }
        }
        for (ObjectName n : Set.copyOf(registered)) {
            if (!wanted.containsKey(n)) {
                unregister(n);
                registered.remove(n);
            }
        }
        for (Map.Entry<ObjectName, StatusBean> w : wanted.entrySet()) {
            if (!registered.contains(w.getKey())) {
                try {
                    server.registerMBean(w.getValue(), w.getKey());
                    registered.add(w.getKey());
                } catch (JMException e) {
                    LOG.warn("could not publish {}: {}", w.getKey(), e.getMessage());
                }
            }
        }
    }

    private Map<String, String> deviceStatus(String name) {
        Map<String, String> m = new LinkedHashMap<>();
        DeviceInfo d = manager.info(name).orElse(null);
        if (d == null) {
            return m;
        }
        m.put("name", d.name());
        m.put("type", d.type());
        m.put("state", d.state().name());
        m.put("size", Long.toString(d.size()));
        m.put("block_size", Integer.toString(d.blockSize()));
        try {
            manager.status(name).forEach((k, v) -> m.putIfAbsent(k, v));
        } catch (IOException | RuntimeException e) {
            m.put("status_error", String.valueOf(e.getMessage()));
        }
        return m;
    }

    ObjectName name(String type, String name) {
        try {
            return new ObjectName(domain + ":type=" + type + ",name=" + quoteIfNeeded(name));
        } catch (JMException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    private static String quoteIfNeeded(String s) {
        for (char c : s.toCharArray()) {
            if (",=:\"*?\n".indexOf(c) >= 0) {
                return ObjectName.quote(s);
            }
        }
        return s;
    }

    private void unregister(ObjectName n) {
        try {
            server.unregisterMBean(n);
        } catch (JMException e) {
            LOG.debug("{} was already gone: {}", n, e.getMessage());
        }
    }
}
