package dev.strata.core.internal;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import org.osgi.framework.BundleContext;
import org.osgi.framework.Constants;
import org.osgi.framework.ServiceReference;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceHandle;
import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceManager;
import dev.strata.api.DeviceTimeoutException;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Target;
import dev.strata.api.TargetContext;
import dev.strata.api.TargetFactory;
import dev.strata.core.internal.config.ConfigAdminStore;

/**
 * The mapped devices: creation, stacking, suspend/resume, reload, hot update of target
 * factories and persistence of the definitions.
 *
 * <h2>Locking rules</h2>
 * <ul>
 * <li>{@code structure} (a monitor) guards the device map, the factory registry and the
 * dependency graph (each device's {@code lowers}, {@code handles}, {@code removed},
 * {@code creating}). It is held only for short bookkeeping: never while a target is built,
 * closed or does I/O, never while waiting for a gate to drain.</li>
 * <li>Each device's {@code op} lock serialises its lifecycle (attach, detach, suspend, resume,
 * reload, message, remove). Order: a device's {@code op} before {@code structure}; never two
 * {@code op} locks at once.</li>
 * <li>I/O takes no lock: it passes the device's {@link Gate}.</li>
 * </ul>
 *
 * <h2>Threads</h2>
 * User operations run on the caller's thread. Factory and configuration events only record what
 * changed and schedule a <em>reconcile</em> of the affected devices on the manager's executor
 * (daemon threads, stopped on deactivate): a reconcile closes a device whose factory is gone and
 * builds a waiting device whose factory and lower devices are ready. Reconciles are idempotent,
 * so events may arrive in any order. A factory's unregistration waits (bounded) for its devices to
 * be closed, so the old bundle's classes are still usable when its targets are closed.
 */
@Component(service = DeviceManager.class, configurationPid = DeviceManagerImpl.PID,
        configurationPolicy = ConfigurationPolicy.OPTIONAL, immediate = true)
@Designate(ocd = DeviceManagerImpl.Config.class)
public final class DeviceManagerImpl implements DeviceManager {
    /** Configuration PID of the core's own settings. */
    public static final String PID = "dev.strata.core";

    private static final Logger LOG = LoggerFactory.getLogger(DeviceManagerImpl.class);

    @ObjectClassDefinition(name = "Strata core", description = "Device manager settings")
    public @interface Config {
        @AttributeDefinition(description = "Seconds a request may wait at a closed gate (suspended device, target "
                + "being updated) and a suspend may wait for in-flight I/O, before failing with a timeout")
        long gate_timeout_seconds() default Settings.DEFAULT_GATE_TIMEOUT_SECONDS;

        @AttributeDefinition(description = "Seconds the unregistration of a target factory is held while the "
                + "devices using it are drained and their targets closed (then it continues in the background)")
        long detach_wait_seconds() default Settings.DEFAULT_DETACH_WAIT_SECONDS;
    }

    private final Object structure = new Object();
    private final Map<String, MappedDevice> devices = new TreeMap<>();
    private final Map<String, List<FactoryEntry>> factories = new HashMap<>();
    private final ExecutorService executor;
    private final ExecutorService storeLane;
    private final ReentrantLock quiet = new ReentrantLock();
    private final Condition quietCondition = quiet.newCondition();
    private final AtomicInteger busy = new AtomicInteger();
    private volatile Settings settings = Settings.defaults();
    private volatile DefinitionStore store;
    private volatile boolean stopped;
    private final java.util.concurrent.atomic.AtomicBoolean stopOnce = new java.util.concurrent.atomic.AtomicBoolean();
    private volatile BundleContext context;

    @Reference
    ConfigurationAdmin configAdmin;
    private ConfigAdminStore configAdminStore;

    /** For Declarative Services: {@link #activate} completes the set-up. */
    public DeviceManagerImpl() {
        AtomicInteger n = new AtomicInteger();
        ThreadFactory threads = r -> {
            Thread t = new Thread(r, "strata-core-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        executor = Executors.newCachedThreadPool(threads);
        storeLane = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "strata-core-definitions");
            t.setDaemon(true);
            return t;
        });
    }

    /** For tests and embedding: a running manager over {@code store}. */
    public DeviceManagerImpl(DefinitionStore store, Settings settings) {
        this();
        this.store = store;
        this.settings = settings;
    }

    @Activate
    void activate(BundleContext context, Config config) {
        settings = Settings.of(config.gate_timeout_seconds(), config.detach_wait_seconds());
        this.context = context;
        ConfigAdminStore cm = new ConfigAdminStore(configAdmin, this);
        store = cm;
        configAdminStore = cm;
        loadStored();
        cm.register(context);
        LOG.info("device manager started (gate timeout {} s)", TimeUnit.NANOSECONDS.toSeconds(settings.gateTimeoutNanos()));
    }

    @Modified
    void modified(Config config) {
        settings = Settings.of(config.gate_timeout_seconds(), config.detach_wait_seconds());
    }

    @Deactivate
    void deactivate() {
        if (configAdminStore != null) {
            configAdminStore.unregister();
        }
        stop();
    }

    Settings settings() {
        return settings;
    }

    void settings(Settings s) {
        settings = s;
    }

    // ------------------------------------------------------------------ factories

    @Reference(service = TargetFactory.class, cardinality = ReferenceCardinality.MULTIPLE,
            policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY, unbind = "unbindFactory")
    void bindFactory(ServiceReference<TargetFactory> ref, TargetFactory factory) {
        Object type = ref.getProperty(TargetFactory.TYPE);
        if (!(type instanceof String) || ((String) type).isEmpty()) {
            LOG.warn("ignoring a TargetFactory without a {} property (from {})", TargetFactory.TYPE, ref.getBundle());
            return;
        }
        Object ranking = ref.getProperty(Constants.SERVICE_RANKING);
        addFactory(new FactoryEntry((String) type, factory, ref.getBundle().getSymbolicName(),
                ref.getBundle().getVersion().toString(), ranking instanceof Integer ? (Integer) ranking : 0,
                (Long) ref.getProperty(Constants.SERVICE_ID)));
    }

    void unbindFactory(ServiceReference<TargetFactory> ref, TargetFactory factory) {
        if (frameworkStopping()) {
            // Everything goes away: close every device top-down now, while this factory and
            // the ones below are still there, rather than waiting at gates for factories that
            // will never return.
            if (!stopOnce.get()) {
                LOG.info("the framework is stopping: closing every device top-down");
            }
            stop();
            return;
        }
        FactoryEntry entry = null;
        synchronized (structure) {
            for (List<FactoryEntry> list : factories.values()) {
                for (FactoryEntry e : list) {
                    if (e.factory() == factory) {
                        entry = e;
                    }
                }
            }
        }
        if (entry != null) {
            removeFactory(entry);
        }
    }

    private boolean frameworkStopping() {
        BundleContext c = context;
        if (c == null) {
            return false;
        }
        try {
            return c.getBundle(0).getState() == org.osgi.framework.Bundle.STOPPING;
        } catch (IllegalStateException e) {
            return true;
        }
    }

    /** A factory appeared: waiting devices of its type are built (in the background). */
    public void addFactory(FactoryEntry entry) {
        synchronized (structure) {
            factories.computeIfAbsent(entry.type(), t -> new ArrayList<>()).add(entry);
        }
        LOG.info("target type '{}' available from {} {}", entry.type(), entry.bundle(), entry.version());
        scheduleWaiting();
    }

    /**
     * A factory went away: every device whose target it built is suspended (gate closed,
     * in-flight I/O drained), its target closed and left waiting for a factory of the same type.
     * Devices are closed top-down (a device above first, so its I/O can still drain through the
     * ones below). Waits at most {@code detach_wait_seconds} for that, then lets it finish in the
     * background.
     */
    public void removeFactory(FactoryEntry entry) {
        List<MappedDevice> affected;
        synchronized (structure) {
            List<FactoryEntry> list = factories.get(entry.type());
            if (list == null || !list.remove(entry)) {
                return;
            }
            if (list.isEmpty()) {
                factories.remove(entry.type());
            }
            affected = new ArrayList<>();
            for (MappedDevice d : devices.values()) {
                if (d.factory == entry) {
                    affected.add(d);
                }
            }
            Map<String, Integer> heights = heights();
            affected.sort(Comparator.comparing((MappedDevice d) -> heights.getOrDefault(d.name, 0)).reversed());
        }
        LOG.info("target type '{}' from {} {} went away; {} device(s) use it", entry.type(), entry.bundle(),
                entry.version(), affected.size());
        if (affected.isEmpty() || stopped) {
            return;
        }
        Future<?> done = submit(() -> {
            for (MappedDevice d : affected) {
                detach(d, entry);
            }
            scheduleWaiting();
        });
        try {
            done.get(settings.detachWaitNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            LOG.warn("devices using '{}' are still being closed; continuing in the background", entry.type());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            LOG.error("closing devices of '{}' failed", entry.type(), e.getCause());
        }
    }

    private FactoryEntry bestFactory(String type) {
        synchronized (structure) {
            FactoryEntry best = null;
            for (FactoryEntry e : factories.getOrDefault(type, List.of())) {
                if (e.betterThan(best)) {
                    best = e;
                }
            }
            return best;
        }
    }

    private FactoryEntry requireFactory(String type) {
        DeviceDefinition.checkType(type);
        FactoryEntry e = bestFactory(type);
        if (e == null) {
            List<String> types;
            synchronized (structure) {
                types = new ArrayList<>(new java.util.TreeSet<>(factories.keySet()));
            }
            throw new InvalidArgumentException("unknown target type '" + type + "'; available: "
                    + (types.isEmpty() ? "none (no target bundle is started)" : String.join(", ", types)));
        }
        return e;
    }

    private boolean registered(FactoryEntry e) {
        synchronized (structure) {
            return factories.getOrDefault(e.type(), List.of()).contains(e);
        }
    }

    private static List<String> lowerDevices(FactoryEntry e, Map<String, String> args) {
        List<String> lowers;
        try {
            lowers = e.factory().lowerDevices(args);
        } catch (InvalidArgumentException ex) {
            throw ex;
        } catch (RuntimeException ex) {
            throw new InvalidArgumentException(e.type() + ": arguments rejected: " + ex.getMessage());
        }
        return lowers == null ? List.of() : List.copyOf(new java.util.LinkedHashSet<>(lowers));
    }

    @Override
    public List<TargetType> targetTypes() {
        List<FactoryEntry> best = new ArrayList<>();
        synchronized (structure) {
            for (String type : new java.util.TreeSet<>(factories.keySet())) {
                best.add(bestFactory(type));
            }
        }
        List<TargetType> out = new ArrayList<>();
        for (FactoryEntry e : best) {
            String usage;
            try {
                usage = e.factory().usage();
            } catch (RuntimeException ex) {
                usage = "?";
            }
            out.add(new TargetType(e.type(), usage, e.bundle(), e.version()));
        }
        return out;
    }

    // ------------------------------------------------------------------ user operations

    @Override
    public DeviceInfo create(String name, String type, Map<String, String> arguments) throws IOException {
        DeviceDefinition def = new DeviceDefinition(DeviceDefinition.checkName(name), type,
                Objects.requireNonNull(arguments, "arguments"));
        FactoryEntry entry = requireFactory(type);
        List<String> lowers = lowerDevices(entry, def.arguments());
        MappedDevice d = new MappedDevice(this, def);
        d.op.lock();
        try {
            synchronized (structure) {
                checkRunning();
                if (devices.containsKey(name)) {
                    throw new InvalidArgumentException("device '" + name
                            + "' already exists; choose another name or dev:remove it first");
                }
                for (String lower : lowers) {
                    requireReadyLower(lower, name);
                }
                d.creating = true;
                d.lowers = lowers;
                devices.put(name, d);
            }
            boolean ok = false;
            try {
                Target t = build(d, entry, def.arguments(), lowers);
                try {
                    d.storeKey = store.save(def);
                } catch (IOException | RuntimeException e) {
                    closeQuietly(d, t);
                    throw new IOException("could not persist device '" + name + "': " + e.getMessage(), e);
                }
                attach(d, entry, t);
                d.creating = false;
                ok = true;
            } finally {
                if (!ok) {
                    synchronized (structure) {
                        devices.remove(name, d);
                    }
                    d.gate.shut("device '" + name + "' was not created");
                }
            }
        } finally {
            d.op.unlock();
        }
        LOG.info("created {}", def.tableLine());
        scheduleWaiting();
        return info(d);
    }

    @Override
    public void remove(String name) throws IOException {
        MappedDevice d = require(name);
        lockOp(d);
        try {
            if (d.removed) {
                throw unknownDevice(name);
            }
            removeLocked(d, true);
        } finally {
            d.op.unlock();
        }
    }

    private void removeLocked(MappedDevice d, boolean deleteDefinition) throws IOException {
        synchronized (structure) {
            List<String> holders = holders(d);
            if (!holders.isEmpty()) {
                throw new InvalidArgumentException("device '" + d.name + "' is in use by " + String.join(", ", holders)
                        + "; remove or close those first");
            }
            d.removed = true;
        }
        if (deleteDefinition) {
            try {
                store.delete(d.name);
            } catch (IOException | RuntimeException e) {
                synchronized (structure) {
                    d.removed = false;
                }
                throw new IOException("could not delete the stored definition of '" + d.name + "': " + e.getMessage(), e);
            }
        }
        d.gate.shut("device '" + d.name + "' was removed");
        awaitDrained(d);
        Target t = d.target;
        d.target = null;
        d.factory = null;
        synchronized (structure) {
            devices.remove(d.name, d);
        }
        LOG.info("removed device {}", d.name);
        if (t != null) {
            try {
                t.close();
            } catch (IOException | RuntimeException e) {
                throw new IOException("device '" + d.name + "' was removed but its target did not close cleanly: "
                        + e.getMessage(), e);
            }
        }
    }

    @Override
    public List<DeviceInfo> list() {
        List<MappedDevice> all;
        synchronized (structure) {
            all = new ArrayList<>(devices.values());
        }
        List<DeviceInfo> out = new ArrayList<>();
        for (MappedDevice d : all) {
            if (!d.creating && !d.removed) {
                out.add(info(d));
            }
        }
        return out;
    }

    @Override
    public Optional<DeviceInfo> info(String name) {
        MappedDevice d;
        synchronized (structure) {
            d = devices.get(name);
        }
        return d == null || d.creating || d.removed ? Optional.empty() : Optional.of(info(d));
    }

    private DeviceInfo info(MappedDevice d) {
        DeviceDefinition def = d.definition;
        List<String> holders;
        synchronized (structure) {
            holders = holders(d);
        }
        boolean built = d.target != null;
        return new DeviceInfo(d.name, def.type(), def.arguments(), built ? d.size : 0, d.blockSize, d.state(),
                d.lowers, holders);
    }

    /** The definitions, in dependency order (lower devices first), as {@code dev:table} prints them. */
    public List<DeviceDefinition> definitions() {
        List<MappedDevice> all;
        Map<String, Integer> heights;
        synchronized (structure) {
            all = new ArrayList<>(devices.values());
            heights = heights();
        }
        all.removeIf(d -> d.creating || d.removed);
        all.sort(Comparator.comparing((MappedDevice d) -> heights.getOrDefault(d.name, 0)).thenComparing(d -> d.name));
        List<DeviceDefinition> out = new ArrayList<>();
        for (MappedDevice d : all) {
            out.add(d.definition);
        }
        return out;
    }

    /** For tests: the devices by name. */
    Map<String, MappedDevice> devicesForTest() {
        synchronized (structure) {
            return new TreeMap<>(devices);
        }
    }

    /** The definition of one device. */
    public DeviceDefinition definition(String name) {
        return require(name).definition;
    }

    @Override
    public Map<String, String> status(String name) throws IOException {
        MappedDevice d = require(name);
        Map<String, String> m = new LinkedHashMap<>();
        m.put("state", d.state().name().toLowerCase(java.util.Locale.ROOT));
        m.put("type", d.definition.type());
        m.put("size", Long.toString(d.target != null ? d.size : 0));
        m.put("block_size", Integer.toString(d.blockSize));
        m.put("in_flight", Long.toString(d.gate.inFlight()));
        m.put("waiting", Integer.toString(d.gate.waiting()));
        m.put("io_reads", Long.toString(d.reads.sum()));
        m.put("io_writes", Long.toString(d.writes.sum()));
        m.put("io_read_bytes", Long.toString(d.readBytes.sum()));
        m.put("io_written_bytes", Long.toString(d.writtenBytes.sum()));
        m.put("io_flushes", Long.toString(d.flushes.sum()));
        m.put("io_discards", Long.toString(d.discards.sum()));
        m.put("io_write_zeroes", Long.toString(d.zeroes.sum()));
        m.put("io_errors", Long.toString(d.errors.sum()));
        String waitingFor = d.waitingFor;
        if (d.target == null && waitingFor != null) {
            m.put("waiting_for", waitingFor);
        }
        String err = d.lastError;
        if (err != null) {
            m.put("last_error", err);
        }
        Target t = d.target;
        if (t != null) {
            try {
                Map<String, String> ts = t.status();
                if (ts != null) {
                    ts.forEach((k, v) -> m.put(m.containsKey(k) ? "target_" + k : k, v));
                }
            } catch (RuntimeException e) {
                m.put("status_error", String.valueOf(e.getMessage()));
            }
        }
        return m;
    }

    @Override
    public void message(String name, String key, String value) throws IOException {
        MappedDevice d = require(name);
        lockOp(d);
        try {
            Target t = d.target;
            if (t == null) {
                throw new InvalidArgumentException("device '" + name + "' has no target right now (waiting for "
                        + d.waitingFor + "); try again when it is active");
            }
            t.message(key, value);
        } finally {
            d.op.unlock();
        }
    }

    // Interim overloads: the core safety work implements the dirty guards and persisted tunables.
    @Override
    public void remove(String name, boolean force) throws IOException {
        remove(name);
    }

    @Override
    public void message(String name, String key, String value, boolean persist) throws IOException {
        message(name, key, value);
    }

    @Override
    public DeviceInfo reload(String name, String type, Map<String, String> arguments, boolean force)
            throws IOException {
        return reload(name, type, arguments);
    }

    @Override
    public <T, R> R withTarget(String name, Class<T> type, TargetCall<? super T, R> call)
            throws IOException, InterruptedException {
        // Interim: the target is read once; the core split makes the call hold it against close.
        MappedDevice d = require(name);
        Target t = d.target;
        if (t == null) {
            throw new InvalidArgumentException("device '" + name + "' has no target right now (waiting for "
                    + d.waitingFor + "); try again when it is active");
        }
        if (!type.isInstance(t)) {
            throw new InvalidArgumentException("device '" + name + "' is a " + d.definition.type()
                    + " device, not a " + (type == dev.strata.api.CacheTarget.class ? "cache" : type.getSimpleName()));
        }
        return call.call(type.cast(t));
    }

    @Override
    public void suspend(String name) throws IOException {
        MappedDevice d = require(name);
        lockOp(d);
        try {
            if (d.userSuspended) {
                throw new InvalidArgumentException("device '" + name + "' is already suspended; dev:resume " + name);
            }
            Target t = d.target;
            if (t == null) {
                d.userSuspended = true; // the gate is closed already; it stays closed when the target returns
                return;
            }
            quiesce(d);
            try {
                t.suspend();
            } catch (IOException | RuntimeException e) {
                d.gate.open();
                throw new IOException("device '" + name + "': the target could not suspend (" + e.getMessage()
                        + "); the device keeps running", e);
            }
            d.userSuspended = true;
        } finally {
            d.op.unlock();
        }
        LOG.info("suspended device {}", name);
    }

    @Override
    public void resume(String name) throws IOException {
        MappedDevice d = require(name);
        lockOp(d);
        try {
            if (!d.userSuspended) {
                throw new InvalidArgumentException("device '" + name + "' is not suspended");
            }
            Target t = d.target;
            if (t == null) {
                d.userSuspended = false;
                schedule(d);
                return;
            }
            try {
                t.resume();
            } catch (IOException | RuntimeException e) {
                throw new IOException("device '" + name + "': the target could not resume (" + e.getMessage()
                        + "); the device stays suspended", e);
            }
            d.userSuspended = false;
            d.gate.open();
        } finally {
            d.op.unlock();
        }
        LOG.info("resumed device {}", name);
    }

    @Override
    public DeviceInfo reload(String name, String type, Map<String, String> arguments) throws IOException {
        MappedDevice d = require(name);
        DeviceDefinition def = new DeviceDefinition(name, type, Objects.requireNonNull(arguments, "arguments"));
        requireFactory(type);
        lockOp(d);
        try {
            if (d.removed) {
                throw unknownDevice(name);
            }
            reloadLocked(d, def, true);
        } finally {
            d.op.unlock();
        }
        return info(d);
    }

    /**
     * Swaps in a target built from {@code def}. The order depends on whether the old and new
     * targets may share storage (see README, "reload"):
     * <ul>
     * <li>disjoint lower devices: build the new target while the device runs; then close the
     * gate, drain, suspend the old, swap, open, close the old. A failed build changes nothing.</li>
     * <li>shared (a common lower device, or a leaf target on either side, whose files the manager
     * cannot see): close the gate, drain, <em>close</em> the old (durable, released), then build
     * the new; if that fails, the old target is reopened from its on-disk state with its own
     * arguments and the device resumes unchanged.</li>
     * </ul>
     */
    private void reloadLocked(MappedDevice d, DeviceDefinition def, boolean persist) throws IOException {
        FactoryEntry entry = requireFactory(def.type());
        List<String> newLowers = lowerDevices(entry, def.arguments());
        List<String> oldLowers = d.lowers;
        synchronized (structure) {
            for (String lower : newLowers) {
                requireReadyLower(lower, d.name);
                if (lower.equals(d.name) || dependsOn(lower, d.name)) {
                    throw new InvalidArgumentException("device '" + lower + "' is stacked on '" + d.name
                            + "'; a device cannot be stacked on itself");
                }
            }
            d.lowers = union(oldLowers, newLowers); // neither set can be removed meanwhile
        }
        boolean done = false;
        try {
            Target old = d.target;
            if (old == null) {
                Target t = build(d, entry, def.arguments(), newLowers);
                try {
                    persist(d, def, persist);
                } catch (IOException e) {
                    closeQuietly(d, t);
                    throw e;
                }
                d.definition = def;
                setLowers(d, newLowers);
                attach(d, entry, t);
                done = true;
                return;
            }
            boolean shared = oldLowers.isEmpty() || newLowers.isEmpty()
                    || oldLowers.stream().anyMatch(newLowers::contains);
            if (!shared) {
                Target t = build(d, entry, def.arguments(), newLowers);
                try {
                    quiesce(d);
                } catch (IOException e) {
                    closeQuietly(d, t);
                    throw e;
                }
                try {
                    if (!d.userSuspended) {
                        old.suspend();
                    }
                    persist(d, def, persist);
                } catch (IOException | RuntimeException e) {
                    closeQuietly(d, t);
                    if (!d.userSuspended) {
                        d.gate.open();
                    }
                    throw e instanceof IOException ? (IOException) e : new IOException(e.getMessage(), e);
                }
                d.definition = def;
                setLowers(d, newLowers);
                attach(d, entry, t);
                closeQuietly(d, old);
            } else {
                DeviceDefinition oldDef = d.definition;
                quiesce(d);
                d.target = null;
                d.factory = null;
                closeQuietly(d, old);
                Target t = null;
                try {
                    t = build(d, entry, def.arguments(), newLowers);
                    persist(d, def, persist);
                } catch (IOException | RuntimeException e) {
                    if (t != null) {
                        closeQuietly(d, t);
                    }
                    setLowers(d, oldLowers);
                    restoreOld(d, oldDef, oldLowers);
                    done = true;
                    throw e;
                }
                d.definition = def;
                setLowers(d, newLowers);
                attach(d, entry, t);
            }
            done = true;
            LOG.info("reloaded {}", def.tableLine());
        } finally {
            if (!done) {
                setLowers(d, oldLowers);
            }
        }
        scheduleWaiting();
    }

    private void restoreOld(MappedDevice d, DeviceDefinition oldDef, List<String> oldLowers) {
        FactoryEntry e = bestFactory(oldDef.type());
        try {
            if (e == null) {
                throw new IOException("no factory for '" + oldDef.type() + "'");
            }
            attach(d, e, build(d, e, oldDef.arguments(), oldLowers));
            LOG.info("reload of {} failed; the old target is back", d.name);
        } catch (IOException | RuntimeException ex) {
            d.lastError = "reload failed and the old target could not be reopened: " + ex.getMessage();
            d.waitingFor = "target type '" + oldDef.type() + "'";
            LOG.error("device {}: {}", d.name, d.lastError);
        }
    }

    private void persist(MappedDevice d, DeviceDefinition def, boolean persist) throws IOException {
        if (!persist) {
            return;
        }
        try {
            d.storeKey = store.save(def);
        } catch (IOException | RuntimeException e) {
            throw new IOException("could not persist device '" + d.name + "': " + e.getMessage(), e);
        }
    }

    @Override
    public DeviceHandle open(String name, String holder) {
        Objects.requireNonNull(holder, "holder");
        synchronized (structure) {
            MappedDevice d = devices.get(name);
            if (d == null || d.removed || d.creating) {
                throw unknownDevice(name);
            }
            Handle h = new Handle(this, d, holder);
            d.handles.add(h);
            return h;
        }
    }

    void release(MappedDevice d, Handle h) {
        synchronized (structure) {
            d.handles.remove(h);
        }
    }

    // ------------------------------------------------------------------ definitions from the store

    /**
     * Loads every stored definition and builds, on the calling thread and in dependency order,
     * every device whose factory and lower devices are there; the others wait (and are built in
     * the background when what they need appears). Called at activation, so that the stack is
     * up when the service is, as far as the factories already registered allow.
     */
    public void loadStored() {
        try {
            for (String key : store.keys()) {
                applyStored(key);
            }
        } catch (IOException | RuntimeException e) {
            LOG.error("could not load the stored device definitions", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        boolean progress = true;
        while (progress && !stopped) {
            progress = false;
            List<MappedDevice> waiting = new ArrayList<>();
            synchronized (structure) {
                for (MappedDevice d : devices.values()) {
                    if (d.target == null && !d.removed && !d.creating) {
                        waiting.add(d);
                    }
                }
            }
            for (MappedDevice d : waiting) {
                try {
                    reconcile(d);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                progress |= d.target != null;
            }
        }
    }

    /** A stored definition appeared or changed (also the echo of the manager's own writes). */
    public Future<?> definitionChanged(String key) {
        return submitStore(() -> applyStored(key));
    }

    /** A stored definition was deleted. */
    public Future<?> definitionDeleted(String key) {
        return submitStore(() -> applyDeleted(key));
    }

    private void applyStored(String key) throws IOException, InterruptedException {
        Optional<DeviceDefinition> loaded = store.load(key);
        if (loaded.isEmpty()) {
            return;
        }
        DeviceDefinition def = loaded.get();
        MappedDevice d;
        synchronized (structure) {
            if (stopped) {
                return;
            }
            d = devices.get(def.name());
            if (d == null) {
                d = new MappedDevice(this, def);
                d.storeKey = key;
                d.waitingFor = "target type '" + def.type() + "'";
                devices.put(def.name(), d);
                LOG.info("device {} defined by configuration {}: {}", def.name(), key, def.tableLine());
                schedule(d);
                return;
            }
        }
        d.op.lockInterruptibly();
        try {
            if (d.removed) {
                return;
            }
            if (d.storeKey == null) {
                d.storeKey = key;
            } else if (!d.storeKey.equals(key)) {
                LOG.warn("configuration {} defines device {}, which configuration {} already defines; ignored", key,
                        def.name(), d.storeKey);
                return;
            }
            if (def.equals(d.definition)) {
                return;
            }
            if (d.target == null) {
                d.definition = def;
                setLowers(d, List.of());
                d.lastError = null;
                d.waitingFor = "target type '" + def.type() + "'";
                schedule(d);
                return;
            }
            LOG.info("configuration of {} changed: reloading to {}", d.name, def.tableLine());
            try {
                reloadLocked(d, def, false);
            } catch (IOException | RuntimeException e) {
                d.lastError = "the changed configuration could not be applied: " + e.getMessage();
                LOG.error("device {}: {}; it keeps {}", d.name, d.lastError, d.definition.tableLine());
            }
        } finally {
            d.op.unlock();
        }
    }

    private void applyDeleted(String key) throws IOException, InterruptedException {
        if (store.load(key).isPresent()) {
            return; // re-created meanwhile
        }
        MappedDevice d = null;
        synchronized (structure) {
            for (MappedDevice x : devices.values()) {
                if (key.equals(x.storeKey)) {
                    d = x;
                }
            }
        }
        if (d == null) {
            return;
        }
        d.op.lockInterruptibly();
        try {
            if (d.removed) {
                return;
            }
            try {
                removeLocked(d, false);
            } catch (InvalidArgumentException e) {
                d.storeKey = null;
                LOG.warn("the configuration of {} was deleted but {}; keeping the device (it will not come back "
                        + "after a restart unless created again)", d.name, e.getMessage());
            }
        } finally {
            d.op.unlock();
        }
    }

    // ------------------------------------------------------------------ reconcile: attach / detach

    private void scheduleWaiting() {
        List<MappedDevice> waiting = new ArrayList<>();
        synchronized (structure) {
            for (MappedDevice d : devices.values()) {
                if (d.target == null && !d.removed && !d.creating) {
                    waiting.add(d);
                }
            }
        }
        waiting.forEach(this::schedule);
    }

    private void schedule(MappedDevice d) {
        if (!stopped && d.reconcilePending.compareAndSet(false, true)) {
            submit(() -> {
                d.reconcilePending.set(false);
                reconcile(d);
            });
        }
    }

    /** Brings a device in line with the factories: builds it if it waits and all it needs is there. */
    private void reconcile(MappedDevice d) throws InterruptedException {
        boolean attached = false;
        d.op.lockInterruptibly();
        try {
            if (d.removed || d.creating || stopped) {
                return;
            }
            FactoryEntry current = d.factory;
            if (d.target != null && current != null && !registered(current)) {
                detach(d, current);
            }
            if (d.target != null) {
                return;
            }
            DeviceDefinition def = d.definition;
            FactoryEntry entry = bestFactory(def.type());
            if (entry == null) {
                d.waitingFor = "target type '" + def.type() + "'";
                return;
            }
            List<String> lowers;
            try {
                lowers = lowerDevices(entry, def.arguments());
            } catch (InvalidArgumentException e) {
                d.lastError = e.getMessage();
                d.waitingFor = "valid arguments";
                LOG.error("device {}: {}", d.name, e.getMessage());
                return;
            }
            synchronized (structure) {
                d.lowers = lowers; // record the graph even while waiting
                for (String lower : lowers) {
                    MappedDevice l = devices.get(lower);
                    if (l == null || !l.ready() || lower.equals(d.name)) {
                        d.waitingFor = "device '" + lower + "'";
                        return;
                    }
                }
            }
            try {
                Target t = build(d, entry, def.arguments(), lowers);
                attach(d, entry, t);
                d.lastError = null;
                attached = true;
                LOG.info("device {} is up: {}", d.name, def.tableLine());
            } catch (IOException | RuntimeException e) {
                d.lastError = e.getMessage();
                d.waitingFor = "a successful build (see last_error)";
                LOG.error("device {} could not be built: {}", d.name, e.getMessage());
            } catch (LinkageError e) {
                // Bundle.update() registers the new revision's factory, and the refresh that
                // follows disposes of its class loader while a build may be loading classes
                // lazily. The refreshed factory registers again and the device is rebuilt then.
                d.lastError = "the '" + def.type() + "' bundle was refreshed during the build: " + e;
                d.waitingFor = "target type '" + def.type() + "' (its bundle is being refreshed)";
                LOG.warn("device {}: {}; waiting for the refreshed factory", d.name, d.lastError);
            }
        } finally {
            d.op.unlock();
        }
        if (attached) {
            scheduleWaiting();
        }
    }

    /**
     * Suspends a device whose factory went away: gate closed, in-flight I/O drained (as long as
     * it takes: the target may not be closed under running requests), target closed, state
     * WAITING_FOR_TARGET. Requests keep waiting at the gate for the next factory.
     */
    private void detach(MappedDevice d, FactoryEntry gone) throws InterruptedException {
        boolean locked = false;
        if (!d.op.isHeldByCurrentThread()) {
            d.op.lockInterruptibly();
            locked = true;
        }
        try {
            Target t = d.target;
            if (t == null || d.factory != gone || d.removed) {
                return;
            }
            d.gate.close();
            while (!d.gate.drain(settings.gateTimeoutNanos())) {
                LOG.warn("device {}: {} request(s) still in flight; waiting before closing its '{}' target", d.name,
                        d.gate.inFlight(), gone.type());
            }
            d.target = null;
            d.factory = null;
            d.waitingFor = "target type '" + gone.type() + "'";
            try {
                t.close();
                LOG.info("device {} suspended, its '{}' target closed; waiting for the type to return", d.name,
                        gone.type());
            } catch (IOException | RuntimeException e) {
                d.lastError = "target did not close cleanly: " + e.getMessage();
                LOG.error("device {}: {}", d.name, d.lastError, e);
            }
        } finally {
            if (locked) {
                d.op.unlock();
            }
        }
    }

    private void attach(MappedDevice d, FactoryEntry entry, Target t) throws IOException {
        d.size = t.size();
        d.blockSize = t.blockSize();
        d.target = t;
        d.factory = entry;
        d.waitingFor = null;
        if (d.userSuspended) {
            try {
                t.suspend();
            } catch (IOException | RuntimeException e) {
                LOG.warn("device {}: suspending the new target failed: {}", d.name, e.getMessage());
            }
        } else {
            d.gate.open();
        }
        if (!registered(entry)) {
            // the factory went away while the target was being built: the reconcile closes it again
            schedule(d);
        }
    }

    private Target build(MappedDevice d, FactoryEntry entry, Map<String, String> args, List<String> lowers)
            throws IOException {
        Map<String, BlockDevice> views = new HashMap<>();
        synchronized (structure) {
            for (String lower : lowers) {
                MappedDevice l = devices.get(lower);
                if (l == null) {
                    throw new InvalidArgumentException("no device named '" + lower + "'; see dev:list");
                }
                views.put(lower, l.view);
            }
        }
        Map<String, String> frozen = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(args));
        TargetContext ctx = new TargetContext() {
            @Override
            public String deviceName() {
                return d.name;
            }

            @Override
            public Map<String, String> arguments() {
                return frozen;
            }

            @Override
            public BlockDevice lowerDevice(String name) {
                BlockDevice v = views.get(name);
                if (v == null) {
                    throw new InvalidArgumentException(entry.type() + ": '" + name
                            + "' is not among the lower devices its arguments name " + lowers);
                }
                return v;
            }
        };
        Target t;
        try {
            t = entry.factory().create(ctx);
        } catch (InvalidArgumentException | IOException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new IOException(entry.type() + ": could not build the target: " + e, e);
        }
        if (t == null) {
            throw new IOException(entry.type() + ": the factory built no target");
        }
        if (t.size() < 0 || t.size() % BlockDevice.SECTOR != 0) {
            closeQuietly(d, t);
            throw new IOException(entry.type() + ": the target's size " + t.size() + " is not a multiple of 512");
        }
        return t;
    }

    /** Closes the gate and waits (bounded) for in-flight I/O; reopens and fails on timeout. */
    private void quiesce(MappedDevice d) throws IOException {
        boolean wasOpen = d.gate.isOpen();
        d.gate.close();
        boolean drained;
        try {
            drained = d.gate.drain(settings.gateTimeoutNanos());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            drained = false;
        }
        if (!drained) {
            if (wasOpen) {
                d.gate.open();
            }
            throw new DeviceTimeoutException(d.name, -1, d.gate.inFlight()
                    + " request(s) did not finish in time; nothing was changed");
        }
    }

    /**
     * Waits until no request is in flight. Not interruptible: its callers close the target next,
     * and closing it under running requests would fail or corrupt them (an interrupted
     * {@code dev:remove} must not do that). Requests end by themselves: every lower call has a
     * deadline. The interrupt is kept for the caller.
     */
    private void awaitDrained(MappedDevice d) {
        boolean interrupted = false;
        try {
            for (;;) {
                try {
                    if (d.gate.drain(settings.gateTimeoutNanos())) {
                        return;
                    }
                    LOG.warn("device {}: waiting for {} request(s) in flight", d.name, d.gate.inFlight());
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void closeQuietly(MappedDevice d, Target t) {
        try {
            t.close();
        } catch (IOException | RuntimeException e) {
            LOG.warn("device {}: closing a '{}' target failed: {}", d.name, t.type(), e.getMessage());
        }
    }

    // ------------------------------------------------------------------ graph helpers (under structure)

    private void requireReadyLower(String lower, String upper) {
        MappedDevice l = devices.get(lower);
        if (l == null || l.removed || l.creating) {
            throw new InvalidArgumentException("no device named '" + lower + "' to stack '" + upper
                    + "' on; create it first (see dev:list)");
        }
        if (l.target == null) {
            throw new InvalidArgumentException("device '" + lower + "' is waiting for " + l.waitingFor
                    + "; stack on it once it is active");
        }
    }

    private boolean dependsOn(String upper, String lower) {
        Set<String> seen = new HashSet<>();
        List<String> todo = new ArrayList<>(List.of(upper));
        while (!todo.isEmpty()) {
            String n = todo.remove(todo.size() - 1);
            if (!seen.add(n)) {
                continue;
            }
            MappedDevice d = devices.get(n);
            if (d != null) {
                for (String l : d.lowers) {
                    if (l.equals(lower)) {
                        return true;
                    }
                    todo.add(l);
                }
            }
        }
        return false;
    }

    /** Height of every device: 0 for a leaf, 1 + the highest lower device otherwise. */
    private Map<String, Integer> heights() {
        Map<String, Integer> h = new HashMap<>();
        for (String name : devices.keySet()) {
            height(name, h, new HashSet<>());
        }
        return h;
    }

    private int height(String name, Map<String, Integer> memo, Set<String> path) {
        Integer known = memo.get(name);
        if (known != null) {
            return known;
        }
        MappedDevice d = devices.get(name);
        if (d == null || !path.add(name)) {
            return 0;
        }
        int h = 0;
        for (String l : d.lowers) {
            h = Math.max(h, 1 + height(l, memo, path));
        }
        path.remove(name);
        memo.put(name, h);
        return h;
    }

    private List<String> holders(MappedDevice d) {
        List<String> out = new ArrayList<>();
        for (MappedDevice u : devices.values()) {
            if (u != d && !u.removed && u.lowers.contains(d.name)) {
                out.add(u.name);
            }
        }
        for (Handle h : d.handles) {
            if (!out.contains(h.holder)) {
                out.add(h.holder);
            }
        }
        return out;
    }

    private void setLowers(MappedDevice d, List<String> lowers) {
        synchronized (structure) {
            d.lowers = lowers;
        }
    }

    private static List<String> union(List<String> a, List<String> b) {
        List<String> out = new ArrayList<>(a);
        for (String s : b) {
            if (!out.contains(s)) {
                out.add(s);
            }
        }
        return List.copyOf(out);
    }

    // ------------------------------------------------------------------ misc

    private MappedDevice require(String name) {
        MappedDevice d;
        synchronized (structure) {
            d = devices.get(name);
        }
        if (d == null || d.creating || d.removed) {
            throw unknownDevice(name);
        }
        return d;
    }

    private static InvalidArgumentException unknownDevice(String name) {
        return new InvalidArgumentException("no device named '" + name + "'; see dev:list");
    }

    private void lockOp(MappedDevice d) throws IOException {
        try {
            if (!d.op.tryLock(settings.gateTimeoutNanos(), TimeUnit.NANOSECONDS)) {
                throw new DeviceTimeoutException(d.name, -1, "another operation on the device is still running; try again");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted");
        }
    }

    private void checkRunning() {
        if (stopped) {
            throw new InvalidArgumentException("the device manager is stopping");
        }
    }

    private interface Task {
        void run() throws Exception;
    }

    private Future<?> submit(Task task) {
        return submitTo(executor, task);
    }

    private Future<?> submitStore(Task task) {
        return submitTo(storeLane, task);
    }

    private Future<?> submitTo(ExecutorService ex, Task task) {
        busy.incrementAndGet();
        try {
            return ex.submit(() -> {
                try {
                    task.run();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (Exception | Error e) {
                    LOG.error("background device task failed", e);
                } finally {
                    if (busy.decrementAndGet() == 0) {
                        quiet.lock();
                        try {
                            quietCondition.signalAll();
                        } finally {
                            quiet.unlock();
                        }
                    }
                }
                return null;
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            busy.decrementAndGet();
            return java.util.concurrent.CompletableFuture.completedFuture(null);
        }
    }

    /** Waits until no background task is queued or running (for tests and orderly shutdown). */
    public boolean awaitQuiet(long timeout, TimeUnit unit) throws InterruptedException {
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        quiet.lock();
        try {
            while (busy.get() != 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                quietCondition.awaitNanos(left);
            }
            return true;
        } finally {
            quiet.unlock();
        }
    }

    /**
     * Stops the manager: background tasks end, then every device is closed top-down (gate shut,
     * in-flight I/O drained, target closed). Definitions stay stored.
     */
    public void stop() {
        if (!stopOnce.compareAndSet(false, true)) {
            return;
        }
        stopped = true;
        storeLane.shutdownNow();
        executor.shutdownNow();
        try {
            executor.awaitTermination(settings.gateTimeoutNanos(), TimeUnit.NANOSECONDS);
            storeLane.awaitTermination(settings.gateTimeoutNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        List<MappedDevice> all;
        synchronized (structure) {
            all = new ArrayList<>(devices.values());
            Map<String, Integer> heights = heights();
            all.sort(Comparator.comparing((MappedDevice d) -> heights.getOrDefault(d.name, 0)).reversed());
        }
        // a device without a target will not get one any more: requests waiting at its gate
        // (also those of the devices above, closing now) fail at once instead of at the deadline
        for (MappedDevice d : all) {
            if (d.target == null) {
                d.gate.shut("the device manager stopped");
            }
        }
        for (MappedDevice d : all) {
            boolean locked = false;
            try {
                locked = d.op.tryLock(settings.gateTimeoutNanos(), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            try {
                // close the gate and drain first, so devices above could finish through it
                d.gate.close();
                awaitDrained(d);
                d.gate.shut("the device manager stopped");
                Target t = d.target;
                d.target = null;
                if (t != null) {
                    closeQuietly(d, t);
                }
            } finally {
                if (locked) {
                    d.op.unlock();
                }
            }
        }
        synchronized (structure) {
            devices.clear();
        }
        LOG.info("device manager stopped");
    }
}
