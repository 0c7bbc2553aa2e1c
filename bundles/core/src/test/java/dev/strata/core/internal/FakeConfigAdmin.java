package dev.strata.core.internal;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.osgi.framework.Constants;
import org.osgi.framework.Filter;
import org.osgi.framework.FrameworkUtil;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.cm.ConfigurationEvent;
import org.osgi.service.cm.SynchronousConfigurationListener;

/**
 * The part of Configuration Admin that {@link dev.strata.core.internal.config.ConfigAdminStore}
 * uses, in memory, with Felix's order of events: an update stores the properties and calls the
 * synchronous listeners on the updating thread; the deliveries to the managed service factory
 * (asynchronous in Felix) are left to the test, which makes them as late as it wants — that is
 * how the race with FileInstall is replayed step by step.
 */
final class FakeConfigAdmin {
    private final Map<String, Hashtable<String, Object>> configs = new LinkedHashMap<>();
    private final List<SynchronousConfigurationListener> listeners = new ArrayList<>();
    /** The PIDs updated or deleted since the last {@link #drainDeliveries}, in order (the MSF's queue). */
    private final List<String> deliveries = new ArrayList<>();
    @SuppressWarnings("unchecked")
    private final ServiceReference<ConfigurationAdmin> reference = (ServiceReference<ConfigurationAdmin>) Proxy.newProxyInstance(
            getClass().getClassLoader(), new Class<?>[] {ServiceReference.class}, (p, m, a) -> null);
    final ConfigurationAdmin admin = (ConfigurationAdmin) Proxy.newProxyInstance(getClass().getClassLoader(),
            new Class<?>[] {ConfigurationAdmin.class}, (p, m, a) -> switch (m.getName()) {
                case "listConfigurations" -> list((String) a[0]);
                case "getFactoryConfiguration" -> factoryConfiguration((String) a[0], (String) a[1]);
                default -> throw new UnsupportedOperationException(m.getName());
            });

    synchronized void listen(SynchronousConfigurationListener l) {
        listeners.add(l);
    }

    /** FileInstall's {@code setConfig}: the file's properties, tied to the file by its name. */
    void fileInstallSets(String pid, String fileUrl, Map<String, String> fileProperties) {
        Hashtable<String, Object> p = new Hashtable<>(fileProperties);
        p.put("felix.fileinstall.filename", fileUrl);
        update(pid, p);
    }

    synchronized Dictionary<String, Object> properties(String pid) {
        Hashtable<String, Object> p = configs.get(pid);
        return p == null ? null : new Hashtable<>(p);
    }

    /** The deliveries queued for the managed service factory so far (and forgets them). */
    synchronized List<String> drainDeliveries() {
        List<String> out = new ArrayList<>(deliveries);
        deliveries.clear();
        return out;
    }

    void update(String pid, Dictionary<String, ?> properties) {
        Hashtable<String, Object> p = new Hashtable<>();
        for (String k : Collections.list(properties.keys())) {
            p.put(k, properties.get(k));
        }
        p.put(Constants.SERVICE_PID, pid);
        p.put(ConfigurationAdmin.SERVICE_FACTORYPID, factoryOf(pid));
        synchronized (this) {
            configs.put(pid, p);
            deliveries.add(pid);
        }
        fire(ConfigurationEvent.CM_UPDATED, pid);
    }

    void delete(String pid) {
        synchronized (this) {
            configs.remove(pid);
            deliveries.add(pid);
        }
        fire(ConfigurationEvent.CM_DELETED, pid);
    }

    private void fire(int type, String pid) {
        List<SynchronousConfigurationListener> ls;
        synchronized (this) {
            ls = new ArrayList<>(listeners);
        }
        ConfigurationEvent e = new ConfigurationEvent(reference, type, factoryOf(pid), pid);
        for (SynchronousConfigurationListener l : ls) {
            l.configurationEvent(e);
        }
    }

    private static String factoryOf(String pid) {
        int at = pid.indexOf('~');
        return at < 0 ? null : pid.substring(0, at);
    }

    private synchronized Configuration[] list(String filter) throws InvalidSyntaxException {
        Filter f = filter == null ? null : FrameworkUtil.createFilter(filter);
        List<Configuration> out = new ArrayList<>();
        for (Map.Entry<String, Hashtable<String, Object>> e : configs.entrySet()) {
            if (f == null || f.match(e.getValue())) {
                out.add(configuration(e.getKey()));
            }
        }
        return out.isEmpty() ? null : out.toArray(new Configuration[0]);
    }

    private Configuration factoryConfiguration(String factoryPid, String name) {
        return configuration(factoryPid + "~" + name);
    }

    private Configuration configuration(String pid) {
        return (Configuration) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Configuration.class},
                (p, m, a) -> switch (m.getName()) {
                    case "getPid" -> pid;
                    case "getFactoryPid" -> factoryOf(pid);
                    case "getProperties" -> properties(pid);
                    case "update" -> {
                        update(pid, (Dictionary<String, ?>) a[0]);
                        yield null;
                    }
                    case "delete" -> {
                        delete(pid);
                        yield null;
                    }
                    case "hashCode" -> pid.hashCode();
                    case "equals" -> p == a[0];
                    case "toString" -> "Configuration " + pid;
                    default -> throw new UnsupportedOperationException(m.getName());
                });
    }
}
