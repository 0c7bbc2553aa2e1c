package dev.strata.launcher;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Dictionary;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;

/**
 * Whether the configured stack is up, asked in two steps, each with a deadline:
 * <ol>
 * <li>every device defined in Configuration Admin (persisted by an earlier run, or a
 * {@code dev.strata.device-*.cfg} loaded by FileInstall) exists in the device manager with a
 * built target, so {@code -c "dev:status wb0"} right after start sees the default stack;</li>
 * <li>{@code strata:health} (the shell bundle) lists nothing: every device active, every export
 * serving. Its lines are the problems the launcher reports ({@code export wb0: 127.0.0.1:10809
 * is in use}).</li>
 * </ol>
 * Reflective, like {@link GogoSession}: the launcher cannot link against bundle classes.
 */
final class Readiness {

    private static final String DEVICE_FACTORY_PID = "dev.strata.device";
    static final String HEALTH = "strata:health";

    private final BundleContext context;

    Readiness(BundleContext context) {
        this.context = context;
    }

    /**
     * Waits until nothing is missing or {@code seconds} have passed (or {@code stop} says so);
     * returns the problems left, empty when the stack is up.
     */
    List<String> await(GogoSession session, long seconds, BooleanSupplier stop) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        List<String> problems = List.of();
        while (!stop.getAsBoolean()) {
            problems = problems(session);
            if (problems.isEmpty() || System.nanoTime() - deadline > 0) {
                break;
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        return problems;
    }

    /** What is not up right now: devices not built yet, then strata:health's lines. */
    List<String> problems(GogoSession session) {
        List<String> out = new ArrayList<>();
        if (session != null && session.hasCommand(HEALTH)) {
            try {
                Object result = session.execute(HEALTH);
                if (result instanceof Collection<?> lines) {
                    for (Object l : lines) {
                        out.add(String.valueOf(l));
                    }
                }
            } catch (Exception e) {
                out.add("cannot tell whether the stack is up: " + Main.describe(e));
            }
        }
        // a device strata:health says nothing about (not listed by the manager yet) gets the
        // generic line; one it explains keeps its reason ("waiting for target type 'nosuch'"),
        // the same line the console prints at start
        for (String name : missingDevices()) {
            if (out.stream().noneMatch(l -> l.startsWith("device " + name + ":"))) {
                out.add("device " + name + ": configured but not up yet (see var/log/strata.log)");
            }
        }
        return out;
    }

    /**
     * Started by socket activation, some export must serve on the inherited socket, or its
     * clients would wait forever for a greeting: the problem line if none does, else nothing.
     * ({@code nbd:exports} shows such an export's address as {@code inherited:…}.)
     */
    static List<String> activationProblems(GogoSession session) {
        if (!Boolean.getBoolean(Main.SOCKET_ACTIVATION)) {
            return List.of();
        }
        String table = "";
        try {
            table = session.format(session.execute("nbd:exports"));
        } catch (Exception e) {
            // no NBD bundle: no export at all, said below
        }
        if (table != null && table.lines().anyMatch(l -> l.contains(" inherited:"))) {
            return List.of();
        }
        return List.of("socket activation: no export serves on the inherited socket; give one inherited=true in its"
                + " deploy/dev.strata.nbd.export-NAME.cfg, or run nbd:export DEVICE --inherited (docs/nbd.md, Socket activation)");
    }

    /** Names configured but not (yet) listed by the device manager with a target. */
    private Set<String> missingDevices() {
        Set<String> configured = new LinkedHashSet<>();
        for (Dictionary<?, ?> d : configurations(DEVICE_FACTORY_PID)) {
            Object name = d.get("name");
            if (name != null) {
                configured.add(name.toString());
            }
        }
        if (configured.isEmpty()) {
            return configured;
        }
        ServiceReference<?> dmRef = context.getServiceReference("dev.strata.api.DeviceManager");
        if (dmRef == null) {
            return Set.of(); // no device manager (core not installed or failed): strata:health says so
        }
        Object dm = context.getService(dmRef);
        try {
            Method list = dmRef.getBundle().loadClass("dev.strata.api.DeviceManager").getMethod("list");
            Collection<?> devices = (Collection<?>) list.invoke(dm);
            Class<?> info = dmRef.getBundle().loadClass("dev.strata.api.DeviceInfo");
            Method name = info.getMethod("name");
            Method size = info.getMethod("size");
            for (Object d : devices) {
                if (((Number) size.invoke(d)).longValue() > 0) { // 0 while its target is not built
                    configured.remove(String.valueOf(name.invoke(d)));
                }
            }
            return configured;
        } catch (ReflectiveOperationException | RuntimeException e) {
            return Set.of(); // cannot tell: strata:health still can
        } finally {
            context.ungetService(dmRef);
        }
    }

    /** The properties of every configuration of a factory PID (empty if Config Admin is absent). */
    private List<Dictionary<?, ?>> configurations(String factoryPid) {
        List<Dictionary<?, ?>> out = new ArrayList<>();
        ServiceReference<?> cmRef = context.getServiceReference("org.osgi.service.cm.ConfigurationAdmin");
        if (cmRef == null) {
            return out;
        }
        Object cm = context.getService(cmRef);
        try {
            Method listConfigurations = cmRef.getBundle().loadClass("org.osgi.service.cm.ConfigurationAdmin")
                    .getMethod("listConfigurations", String.class);
            Method getProperties = cmRef.getBundle().loadClass("org.osgi.service.cm.Configuration").getMethod("getProperties");
            Object[] configs = (Object[]) listConfigurations.invoke(cm, "(service.factoryPid=" + factoryPid + ")");
            if (configs != null) {
                for (Object c : configs) {
                    Dictionary<?, ?> d = (Dictionary<?, ?>) getProperties.invoke(c);
                    if (d != null) {
                        out.add(d);
                    }
                }
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            // cannot tell: nothing to wait for
        } finally {
            context.ungetService(cmRef);
        }
        return out;
    }
}
