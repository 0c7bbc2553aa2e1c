package dev.strata.examples.embedded;

import java.io.IOException;
import java.lang.reflect.Method;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.Dictionary;
import java.util.concurrent.TimeUnit;

import org.osgi.framework.BundleContext;
import org.osgi.util.tracker.ServiceTracker;

/** Waiting for services and talking to Configuration Admin without sharing its classes. */
final class Services {
    private Services() {
    }

    static <T> T await(BundleContext context, Class<T> type, long seconds) throws InterruptedException {
        ServiceTracker<T, T> tracker = new ServiceTracker<>(context, type, null);
        tracker.open();
        T service = tracker.waitForService(TimeUnit.SECONDS.toMillis(seconds));
        if (service == null) {
            throw new IllegalStateException("no " + type.getName() + " service within " + seconds + " s");
        }
        return service;
    }

    /**
     * Creates a factory configuration (here: an NBD export, factory PID dev.strata.nbd.export),
     * or updates the one whose {@code key} property has the same value (a restart).
     * The host does not put org.osgi.service.cm on its class path — Config Admin's bundle brings
     * its own — so the service is called reflectively, with only java.* types crossing.
     */
    static void putFactoryConfiguration(BundleContext context, String factoryPid, String key, Dictionary<String, Object> properties,
            long seconds) throws Exception {
        ServiceTracker<Object, Object> tracker = new ServiceTracker<>(context,
                context.createFilter("(objectClass=org.osgi.service.cm.ConfigurationAdmin)"), null);
        tracker.open();
        Object admin = tracker.waitForService(TimeUnit.SECONDS.toMillis(seconds));
        if (admin == null) {
            throw new IllegalStateException("no Configuration Admin within " + seconds + " s");
        }
        Class<?> api = admin.getClass().getClassLoader().loadClass("org.osgi.service.cm.ConfigurationAdmin");
        Object[] existing = (Object[]) api.getMethod("listConfigurations", String.class).invoke(admin,
                "(&(service.factoryPid=" + factoryPid + ")(" + key + "=" + properties.get(key) + "))");
        Object configuration = existing != null && existing.length > 0 ? existing[0]
                : api.getMethod("createFactoryConfiguration", String.class, String.class).invoke(admin, factoryPid, null);
        Method update = api.getClassLoader().loadClass("org.osgi.service.cm.Configuration").getMethod("update", Dictionary.class);
        update.invoke(configuration, properties);
        tracker.close();
    }

    /** Waits (bounded) until the export accepts connections. */
    static void awaitListening(int port, long seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (true) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
                return;
            } catch (IOException e) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("nothing listens on 127.0.0.1:" + port + " after " + seconds + " s");
                }
                Thread.sleep(100);
            }
        }
    }
}
