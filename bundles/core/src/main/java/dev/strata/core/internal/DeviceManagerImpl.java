package dev.strata.core.internal;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.Constants;
import org.osgi.framework.ServiceReference;
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

import dev.strata.api.DeviceHandle;
import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceManager;
import dev.strata.api.TargetFactory;

/**
 * The {@link DeviceManager} service: a thin Declarative Services facade over the manager's parts
 * ({@link Core}): {@link DeviceGraph} (devices, dependencies, claims), {@link FactoryRegistry},
 * {@link Lifecycle} (build, attach, quiesce, detach, close), {@link Reloader} (reload strategies
 * chosen by {@link ReloadOrder}), {@link StoreSync} (definitions in the store),
 * {@link Reconciler} (factory events, background builds, stop), {@link Operations} (the user's
 * operations) and {@link Inspection} (snapshots).
 *
 * <h2>Locking rules</h2>
 * <ul>
 * <li>{@code structure} ({@link DeviceGraph#lock}, a monitor) guards the device map and the
 * dependency graph (each device's {@code lowers}, {@code handles}, {@code removed},
 * {@code creating}). It is held only for short bookkeeping: never while a target is built,
 * closed or does I/O, never while waiting for a gate to drain.</li>
 * <li>The {@link FactoryRegistry}'s own monitor guards the factories; nothing is called or
 * locked while it is held (it may be taken under {@code structure}).</li>
 * <li>Each device's {@code op} lock serialises its lifecycle (attach, detach, suspend, resume,
 * reload, message, remove). Order: a device's {@code op} before {@code structure}; never two
 * {@code op} locks at once.</li>
 * <li>I/O takes no lock: it passes the device's {@link Gate}.</li>
 * </ul>
 *
 * <h2>Threads</h2>
 * User operations run on the caller's thread. Factory and configuration events only record what
 * changed and schedule a <em>reconcile</em> of the affected devices on the manager's
 * {@link Tasks} (daemon threads, stopped on deactivate): a reconcile closes a device whose
 * factory is gone and builds a waiting device whose factory and lower devices are ready.
 * Reconciles are idempotent, so events may arrive in any order. A factory's unregistration
 * waits (bounded) for its devices to be closed, so the old bundle's classes are still usable
 * when its targets are closed.
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

    private final Core core;
    private volatile BundleContext context;

    /** Configuration Admin's store, from {@code config}: given, not constructed here ({@link StoreOpener} says why). */
    @Reference
    StoreOpener stores;
    private StoreOpener.Store openedStore;

    /** For Declarative Services: {@link #activate} completes the set-up. */
    public DeviceManagerImpl() {
        core = new Core(Settings.defaults());
    }

    /** For tests and embedding: a running manager over {@code store}. */
    public DeviceManagerImpl(DefinitionStore store, Settings settings) {
        core = new Core(settings);
        core.store.use(store);
    }

    @Activate
    void activate(BundleContext context, Config config) {
        core.settings(Settings.of(config.gate_timeout_seconds(), config.detach_wait_seconds()));
        this.context = context;
        StoreOpener.Store s = stores.open(this);
        core.store.use(s);
        openedStore = s;
        loadStored();
        s.register(context);
        LOG.info("device manager started (gate timeout {} s)", TimeUnit.NANOSECONDS.toSeconds(core.gateTimeoutNanos()));
    }

    @Modified
    void modified(Config config) {
        core.settings(Settings.of(config.gate_timeout_seconds(), config.detach_wait_seconds()));
    }

    @Deactivate
    void deactivate() {
        if (openedStore != null) {
            openedStore.unregister();
        }
        stop();
    }

    /** For tests: the manager's parts. */
    Core core() {
        return core;
    }

    Settings settings() {
        return core.settings();
    }

    void settings(Settings s) {
        core.settings(s);
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
            if (!core.reconciler.stopping()) {
                LOG.info("the framework or the device manager is stopping: closing every device top-down");
            }
            stop();
            return;
        }
        FactoryEntry entry = core.factories.find(factory);
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
            // the framework, or this bundle (bin/strata's SIGTERM lowers the start level below
            // it; an update of dev.strata.core): either way the manager is going away
            return c.getBundle(0).getState() == Bundle.STOPPING || c.getBundle().getState() == Bundle.STOPPING;
        } catch (IllegalStateException e) {
            return true;
        }
    }

    /** A factory appeared: waiting devices of its type are built (in the background). */
    public void addFactory(FactoryEntry entry) {
        core.reconciler.factoryAdded(entry);
    }

    /** A factory went away: its devices are closed and wait for the type to return. */
    public void removeFactory(FactoryEntry entry) {
        core.reconciler.factoryRemoved(entry);
    }

    @Override
    public List<TargetType> targetTypes() {
        return core.factories.targetTypes();
    }

    // ------------------------------------------------------------------ user operations

    @Override
    public DeviceInfo create(String name, String type, Map<String, String> arguments) throws IOException {
        return core.inspection.info(core.operations.create(name, type, arguments, true));
    }

    @Override
    public DeviceInfo create(String name, String type, Map<String, String> arguments, BuildProgress progress)
            throws IOException {
        return core.inspection.info(core.operations.create(name, type, arguments, true, progress));
    }

    /** Creates a transient device: never stored, gone after a restart ({@code dev:create --transient}). */
    public DeviceInfo createTransient(String name, String type, Map<String, String> arguments) throws IOException {
        return createTransient(name, type, arguments, null);
    }

    /** {@link #createTransient(String, String, Map)} with the build's progress. */
    public DeviceInfo createTransient(String name, String type, Map<String, String> arguments, BuildProgress progress)
            throws IOException {
        return core.inspection.info(core.operations.create(name, type, arguments, false, progress));
    }

    @Override
    public void remove(String name) throws IOException {
        core.operations.remove(name, false);
    }

    @Override
    public void remove(String name, boolean force) throws IOException {
        core.operations.remove(name, force);
    }

    /** {@link #remove(String, boolean)}, returning what a forced removal stranded (or null). */
    public String removeReporting(String name, boolean force) throws IOException {
        return core.operations.remove(name, force);
    }

    @Override
    public List<DeviceInfo> list() {
        return core.inspection.list();
    }

    @Override
    public Optional<DeviceInfo> info(String name) {
        return core.inspection.info(name);
    }

    /** The definitions, in dependency order (lower devices first), as {@code dev:table} prints them. */
    public List<DeviceDefinition> definitions() {
        return core.inspection.definitions();
    }

    /** The definition of one device. */
    public DeviceDefinition definition(String name) {
        return core.graph.require(name).definition;
    }

    /** For tests: the devices by name. */
    Map<String, MappedDevice> devicesForTest() {
        Map<String, MappedDevice> m = new TreeMap<>();
        core.graph.all().forEach(d -> m.put(d.name, d));
        return m;
    }

    @Override
    public Map<String, String> status(String name) throws IOException {
        return core.inspection.status(name);
    }

    @Override
    public void message(String name, String key, String value) throws IOException {
        core.operations.message(name, key, value, true);
    }

    @Override
    public void message(String name, String key, String value, boolean persist) throws IOException {
        core.operations.message(name, key, value, persist);
    }

    /**
     * {@link #message(String, String, String, boolean)}, returning a note: the target's (a change
     * that waits, {@link dev.strata.api.Target#messageWithNote}) and when a persisted message was not kept.
     */
    public String messageReporting(String name, String key, String value, boolean persist) throws IOException {
        return core.operations.message(name, key, value, persist);
    }

    @Override
    public String messageWithNote(String name, String key, String value, boolean persist) throws IOException {
        return messageReporting(name, key, value, persist);
    }

    @Override
    public void suspend(String name) throws IOException {
        core.operations.suspend(name);
    }

    @Override
    public void resume(String name) throws IOException {
        core.operations.resume(name);
    }

    @Override
    public DeviceInfo reload(String name, String type, Map<String, String> arguments) throws IOException {
        return reload(name, type, arguments, false);
    }

    @Override
    public DeviceInfo reload(String name, String type, Map<String, String> arguments, boolean force)
            throws IOException {
        core.operations.reload(name, type, arguments, force);
        return info(name).orElseThrow(() -> DeviceGraph.unknownDevice(name));
    }

    /** {@link #reload(String, String, Map, boolean)}, returning what a forced reload stranded (or null). */
    public String reloadReporting(String name, String type, Map<String, String> arguments, boolean force)
            throws IOException {
        return core.operations.reload(name, type, arguments, force);
    }

    @Override
    public DeviceInfo attach(String name, String type, Map<String, String> arguments, String lowerName)
            throws IOException {
        core.attacher.attach(name, type, arguments, lowerName);
        return info(name).orElseThrow(() -> DeviceGraph.unknownDevice(name));
    }

    @Override
    public DeviceInfo collapse(String name, String lowerName) throws IOException {
        core.collapser.collapse(name, lowerName);
        return info(name).orElseThrow(() -> DeviceGraph.unknownDevice(name));
    }

    @Override
    public boolean checkSwitch(String name, String type, Map<String, String> arguments, String backing,
            Map<String, String> firstBuild) throws IOException {
        try {
            return core.switcher.check(name, type, arguments, backing, firstBuild);
        } catch (dev.strata.api.InvalidArgumentException e) {
            throw Attacher.withoutAllowed(e, backingKey(type)); // the switch keeps the backing argument itself
        }
    }

    /** The backing argument of {@code type} ({@code backing}, {@code origin}), or null. */
    private String backingKey(String type) {
        try {
            return core.factories.require(type).factory().backingArgument();
        } catch (RuntimeException e) {
            return null;
        }
    }

    @Override
    public DeviceInfo switchTarget(String name, String type, Map<String, String> arguments, String backing,
            Map<String, String> firstBuild) throws IOException {
        try {
            core.switcher.switchTarget(name, type, arguments, backing, firstBuild);
        } catch (dev.strata.api.InvalidArgumentException e) {
            throw Attacher.withoutAllowed(e, backingKey(type));
        }
        return info(name).orElseThrow(() -> DeviceGraph.unknownDevice(name));
    }

    @Override
    public DeviceInfo replace(String name, String newCache, ReplaceProgress progress)
            throws IOException, InterruptedException {
        core.replacer.replace(name, newCache, progress);
        return info(name).orElseThrow(() -> DeviceGraph.unknownDevice(name));
    }

    @Override
    public <T, R> R withTarget(String name, Class<T> type, TargetCall<? super T, R> call)
            throws IOException, InterruptedException {
        return core.operations.withTarget(name, type, call);
    }

    @Override
    public DeviceHandle open(String name, String holder) {
        return core.operations.open(name, holder);
    }

    // ------------------------------------------------------------------ definitions from the store

    /**
     * Loads every stored definition and builds, on the calling thread and in dependency order,
     * every device whose factory and lower devices are there. Called at activation, so that the
     * stack is up when the service is, as far as the factories already registered allow.
     */
    public void loadStored() {
        core.store.loadAll();
    }

    /** A stored definition appeared or changed (also the echo of the manager's own writes). */
    public Future<?> definitionChanged(String key) {
        return core.store.changed(key);
    }

    /** A stored definition was deleted. */
    public Future<?> definitionDeleted(String key) {
        return core.store.deleted(key);
    }

    /** One round of {@link BuildRetry} as the ticker runs it every second, at time {@code nowNanos} (for tests). */
    void retryFailedBuilds(long nowNanos) {
        core.buildRetry.runOnce(nowNanos);
    }

    /** Waits until no background task is queued or running (for tests and orderly shutdown). */
    public boolean awaitQuiet(long timeout, TimeUnit unit) throws InterruptedException {
        return core.tasks.awaitQuiet(timeout, unit);
    }

    /**
     * Stops the manager: background tasks end, then every device is closed top-down (gate shut,
     * in-flight I/O drained, target closed). Definitions stay stored.
     */
    public void stop() {
        core.reconciler.stop();
    }
}
