package dev.strata.core.internal;

/**
 * The parts of the device manager, each with one job, wired together once. The DS component
 * ({@link DeviceManagerImpl}) is a facade over them.
 */
final class Core {
    final DeviceGraph graph = new DeviceGraph();
    final FactoryRegistry factories = new FactoryRegistry();
    final Tasks tasks = new Tasks();
    final Lifecycle lifecycle;
    final Reloader reloader;
    final StoreSync store;
    final Reconciler reconciler;
    final Operations operations;
    final Inspection inspection;
    final Attacher attacher;
    final Collapser collapser;
    final Switcher switcher;
    final Replacer replacer;
    final LowerSizes lowerSizes = new LowerSizes();
    final BuildRetry buildRetry;
    private volatile Settings settings;
    volatile boolean stopped;

    Core(Settings settings) {
        this.settings = settings;
        lifecycle = new Lifecycle(this);
        reloader = new Reloader(this);
        store = new StoreSync(this);
        reconciler = new Reconciler(this);
        operations = new Operations(this);
        inspection = new Inspection(this);
        attacher = new Attacher(this);
        collapser = new Collapser(this);
        switcher = new Switcher(this);
        replacer = new Replacer(this);
        buildRetry = new BuildRetry(this);
        tasks.every(BuildRetry.FIRST_NANOS, () -> buildRetry.runOnce(System.nanoTime()));
    }

    Settings settings() {
        return settings;
    }

    void settings(Settings s) {
        settings = s;
    }

    long gateTimeoutNanos() {
        return settings.gateTimeoutNanos();
    }
}
