package dev.strata.launcher;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.StandardOpenOption;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleException;
import org.osgi.framework.Constants;
import org.osgi.framework.FrameworkEvent;
import org.osgi.framework.launch.Framework;
import org.osgi.framework.launch.FrameworkFactory;
import org.osgi.framework.startlevel.BundleStartLevel;
import org.osgi.framework.startlevel.FrameworkStartLevel;

/**
 * One Felix instance of the distribution: configured from {@code conf/config.properties},
 * bundles installed from {@code bundle/} at their start levels, stopped cleanly on every exit path.
 *
 * <h2>Waiting rules</h2>
 * Every wait has a deadline (seconds, in {@code conf/config.properties}):
 * {@code strata.startup.timeout} for the framework to reach its start level and the command
 * processor to appear; {@code strata.command.wait} for a command's service to be registered before
 * it runs (so scripts never race the registration); {@code strata.settle.timeout} for the devices
 * defined in Configuration Admin to exist; {@code strata.stop.timeout} for the framework to stop.
 */
final class StrataFramework {

    /** Strata's scopes first, as in the console: {@code help} is strata:help (descriptions). */
    static final String CONSOLE_SCOPE = "strata:dev:nbd:cache:mirror:feature:log:gogo:*";

    private final Path home;
    private final Main.Options options;
    private final LauncherConfig config;
    private final Path pidFile;
    private final CountDownLatch started = new CountDownLatch(1);
    private final AtomicBoolean stopping = new AtomicBoolean();
    /** Set by the shutdown hook: a signal asked us to stop. */
    private final AtomicBoolean signalled = new AtomicBoolean();
    private volatile Framework framework;
    /** Interactive mode: the start level that starts the shell, reached after start-up settles. */
    private int shellStartLevel;
    /** Held for the life of the process (see lockHome). */
    @SuppressWarnings("unused")
    private FileLock homeLock;
    /** The process's streams, taken before Gogo's ThreadIO replaces System.out/err/in. */
    private final PrintStream out = Main.STDOUT;
    private final PrintStream err = Main.STDERR;
    private final InputStream in = System.in;

    StrataFramework(Path home, Main.Options options) throws Main.StartupException {
        this.home = home;
        this.options = options;
        Path conf = home.resolve("conf/config.properties");
        try {
            this.config = LauncherConfig.load(conf, Map.of("strata.home", home.toString()));
        } catch (IOException | IllegalArgumentException e) {
            throw new Main.StartupException("cannot read " + conf + ": " + e.getMessage(), e);
        }
        this.pidFile = Path.of(config.get("strata.pid.file", home.resolve("var/strata.pid").toString()));
    }

    void start() throws Main.StartupException {
        lockHome();
        Map<String, String> props = config.frameworkProperties();
        if (System.getProperty("logback.configurationFile") == null) {
            System.setProperty("logback.configurationFile", home.resolve("conf/logback.xml").toString());
        }
        try {
            Files.createDirectories(home.resolve("var/log"));
        } catch (IOException e) {
            throw new Main.StartupException("cannot create " + home.resolve("var/log") + ": " + e.getMessage(), e);
        }
        // the shell's prompt (etc/gosh_profile): none unless a person is typing
        props.putIfAbsent("strata.prompt", System.console() != null ? "strata> " : "");
        props.put("strata.home", home.toString());
        // the shell bundle runs its JLine console only in interactive mode (ConsoleComponent)
        props.put("strata.console", Boolean.toString(options.interactive()));
        if (!options.interactive()) {
            // no console; and the shell must not stop the framework when its (empty) script ends
            props.put("gosh.args", "--nointeractive --noshutdown");
        } else {
            // the shell (the highest start level) starts only once the commands and the default
            // stack are there (awaitStop): lines piped in must not race their commands' registration
            shellStartLevel = Integer.parseInt(props.getOrDefault(Constants.FRAMEWORK_BEGINNING_STARTLEVEL, "1").trim());
            if (shellStartLevel > 1) {
                props.put(Constants.FRAMEWORK_BEGINNING_STARTLEVEL, Integer.toString(shellStartLevel - 1));
            }
        }
        adoptDeployFiles(props);
        if (options.noDefaultStack) {
            List<String> names = config.list("strata.default.stack");
            if (!names.isEmpty()) {
                String alternatives = names.stream().map(Pattern::quote).collect(Collectors.joining("|"));
                // on top of the configured filter (which hides Strata's temporary .cfg files)
                String base = props.get("felix.fileinstall.filter");
                props.put("felix.fileinstall.filter", "^(?!(?:" + alternatives + ")$)"
                        + (base == null || base.isBlank() ? ".*" : "(?:" + base.trim() + ")"));
            }
        }

        FrameworkFactory factory = ServiceLoader.load(FrameworkFactory.class, Main.class.getClassLoader()).findFirst()
                .orElseThrow(() -> new Main.StartupException("no OSGi framework on the class path (bin/felix.jar missing?)", null));
        Framework fw = factory.newFramework(props);
        try {
            fw.init();
            BundleContext ctx = fw.getBundleContext();
            ctx.addFrameworkListener(event -> {
                switch (event.getType()) {
                    case FrameworkEvent.STARTED -> started.countDown();
                    case FrameworkEvent.ERROR -> {
                        Bundle b = event.getBundle();
                        Throwable t = event.getThrowable();
                        err.println("strata: bundle " + (b == null ? "?" : b.getSymbolicName()) + ": "
                                + (t == null ? "error" : Main.describe(t)));
                    }
                    default -> {
                    }
                }
            });
            installBundles(ctx);
            framework = fw;
            Runtime.getRuntime().addShutdownHook(new Thread(this::onSignal, "strata-shutdown"));
            fw.start();
        } catch (BundleException | RuntimeException e) {
            stopQuietly(fw);
            throw new Main.StartupException("cannot start the framework: " + Main.describe(e), e);
        }
        awaitStarted();
        Main.writePidFile(pidFile);
    }

    /**
     * One Strata per distribution directory: a second one would wipe the first one's framework
     * cache and share its Configuration Admin files. The lock is held until the process exits.
     */
    private void lockHome() throws Main.StartupException {
        Path lockFile = home.resolve("var/.lock");
        try {
            Files.createDirectories(lockFile.getParent());
            FileChannel ch = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            FileLock lock = ch.tryLock();
            if (lock == null) {
                ch.close();
                String pid = "";
                try {
                    pid = " (pid " + Files.readString(pidFile).trim() + ")";
                } catch (IOException ignored) {
                    // no pid file yet
                }
                throw new Main.StartupException("another Strata is running from " + home + pid
                        + "; stop it first, or run a copy of the distribution", null);
            }
            homeLock = lock;
        } catch (IOException e) {
            throw new Main.StartupException("cannot lock " + lockFile + ": " + e.getMessage(), e);
        }
    }

    /** A copied or moved distribution: its stored configurations must name its own deploy/ files. */
    private void adoptDeployFiles(Map<String, String> props) throws Main.StartupException {
        String cm = props.get("felix.cm.dir");
        String deploy = props.get("felix.fileinstall.dir");
        if (cm == null || deploy == null || deploy.contains(",")) {
            return;
        }
        try {
            List<Path> before = DeployOwnership.adopt(home.resolve(cm), home.resolve(deploy.trim()));
            for (Path dir : before) {
                err.println("strata: the stored device definitions named files in " + dir
                        + " (a copied or moved distribution); they now name those in " + home.resolve(deploy.trim()));
            }
        } catch (IOException e) {
            throw new Main.StartupException("cannot read the stored configurations in " + cm + ": " + e.getMessage(), e);
        }
    }

    private void installBundles(BundleContext ctx) throws Main.StartupException {
        Path dir = home.resolve(config.get("strata.bundle.dir", "bundle"));
        List<Path> jars;
        try (Stream<Path> s = Files.list(dir)) {
            jars = s.filter(p -> p.getFileName().toString().endsWith(".jar")).sorted().toList();
        } catch (IOException e) {
            throw new Main.StartupException("cannot list bundles in " + dir + ": " + e.getMessage(), e);
        }
        List<Bundle> toStart = new ArrayList<>();
        ShippedBundles shipped = new ShippedBundles(ctx, stopping::get);
        for (Path jar : jars) {
            try {
                String location = jar.toUri().toString();
                Bundle b = ctx.getBundle(location);
                if (b == null) {
                    try (InputStream in = Files.newInputStream(jar)) {
                        b = ctx.installBundle(location, in);
                    }
                }
                String bsn = symbolicName(jar);
                int level = config.startLevel(bsn);
                b.adapt(BundleStartLevel.class).setStartLevel(level);
                boolean start = b.getHeaders().get(Constants.FRAGMENT_HOST) == null && startsInThisMode(bsn);
                if (start) {
                    toStart.add(b);
                }
                shipped.add(b, jar, level, start);
            } catch (IOException | BundleException | RuntimeException e) {
                err.println("strata: cannot install " + home.relativize(jar) + ": " + Main.describe(e));
            }
        }
        for (Bundle b : toStart) {
            try {
                b.start(); // persistent: starts when the framework reaches the bundle's start level
            } catch (BundleException e) {
                err.println("strata: cannot start " + b.getSymbolicName() + ": " + Main.describe(e));
            }
        }
    }

    /**
     * Libraries are installed but never started ({@code strata.start.never}: gogo.jline, whose
     * activator would open a console of its own); {@code strata.start.never.interactive} are not
     * started in interactive mode (gogo.shell, which would read the console too).
     */
    private boolean startsInThisMode(String bsn) {
        if (config.list("strata.start.never").contains(bsn)) {
            return false;
        }
        return !(options.interactive() && config.list("strata.start.never.interactive").contains(bsn));
    }

    private static String symbolicName(Path jar) throws IOException {
        try (JarFile jf = new JarFile(jar.toFile())) {
            Manifest mf = jf.getManifest();
            String bsn = mf == null ? null : mf.getMainAttributes().getValue(Constants.BUNDLE_SYMBOLICNAME);
            if (bsn == null) {
                throw new IOException("not a bundle (no Bundle-SymbolicName)");
            }
            int semi = bsn.indexOf(';');
            return (semi < 0 ? bsn : bsn.substring(0, semi)).trim();
        }
    }

    private void awaitStarted() throws Main.StartupException {
        long timeout = config.seconds("strata.startup.timeout", 60);
        try {
            if (!started.await(timeout, TimeUnit.SECONDS)) {
                stop();
                throw new Main.StartupException("the framework did not reach its start level within " + timeout
                        + " s (strata.startup.timeout); see var/log/strata.log", null);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Main.StartupException("interrupted while starting", e);
        }
    }

    /**
     * Interactive mode: once the Strata commands and the defined devices are up, raises the start
     * level to start the Gogo shell, which then owns the console and stops the framework on exit.
     */
    int awaitStop() {
        if (shellStartLevel > 1) {
            try (GogoSession session = openSession()) {
                for (String command : List.of("dev:list", "nbd:exports", "cache:stats")) {
                    awaitCommand(session, command);
                }
                // the console (the shell bundle) prints what is still not up once it starts
                settle(session);
            } catch (Exception e) {
                Main.printFailure(err, e);
            }
            if (!stopping.get()) {
                framework.adapt(FrameworkStartLevel.class).setStartLevel(shellStartLevel);
            }
        }
        waitForStop(0);
        return 0;
    }

    /** {@code -c} and/or {@code --daemon}. */
    int runCommands() {
        Thread watchdog = null;
        if (!options.daemon || !options.scripts.isEmpty()) {
            watchdog = startWatchdog(options.timeoutSeconds, !options.daemon);
        }
        int code = 0;
        try (GogoSession session = openSession()) {
            session.put("SCOPE", CONSOLE_SCOPE);
            awaitCommand(session, Readiness.HEALTH);
            List<String> problems = settle(session);
            if (!options.daemon) {
                for (String p : problems) {
                    err.println("strata: warning: " + p);
                }
            }
            for (String statement : CommandSplitter.split(options.script())) {
                if (stopping.get()) {
                    code = signalled.get() ? 143 : 1;
                    break;
                }
                awaitCommand(session, statement);
                try {
                    Object result = session.execute(statement);
                    String text = session.format(result);
                    if (text != null && !text.isEmpty()) {
                        out.print(text.endsWith("\n") ? text : text + "\n");
                    }
                    out.flush();
                } catch (Exception | LinkageError e) {
                    out.flush();
                    if (stopping.get() && signalled.get()) {
                        code = 143;
                    } else {
                        Main.printFailure(err, e, session, statement);
                        code = 1;
                    }
                    break;
                }
            }
            if (options.daemon && code == 0) {
                // the stack settled once above; only commands that ran since can change it
                code = daemonReady(options.scripts.isEmpty() ? problems : settle(session));
                for (String p : code == 0 ? Readiness.activationProblems(session) : List.<String>of()) {
                    err.println("strata: " + p); // nothing to wait for: no export will take the socket by itself
                    code = 3;
                }
            }
        } catch (Exception e) {
            Main.printFailure(err, e);
            code = 1;
        }
        if (watchdog != null) {
            watchdog.interrupt();
        }
        if (options.daemon && code == 0) {
            out.println("strata: ready (pid " + ProcessHandle.current().pid() + "); stop with SIGTERM");
            out.flush();
            waitForStop(0);
            return 0;
        }
        stop();
        return code;
    }

    /**
     * {@code --daemon} says {@code ready} only when every configured device is active and every
     * configured export serving (after the {@code -c} commands, which may add some); otherwise it
     * prints one line per problem and exits 3.
     */
    private int daemonReady(List<String> problems) {
        if (problems.isEmpty() || stopping.get()) {
            return 0;
        }
        for (String p : problems) {
            err.println("strata: " + p);
        }
        err.println("strata: not ready after " + config.seconds("strata.settle.timeout", 20)
                + " s (strata.settle.timeout); stopping. 'bin/strata' (interactive) starts anyway and shows the same lines");
        err.flush();
        return 3;
    }

    private GogoSession openSession() throws Exception {
        long deadline = deadline(config.seconds("strata.startup.timeout", 60));
        BundleContext ctx = framework.getBundleContext();
        while (true) {
            GogoSession s = GogoSession.open(ctx, in, out, err);
            if (s != null) {
                return s;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("no Gogo command processor after "
                        + config.seconds("strata.startup.timeout", 60) + " s: is bundle/org.apache.felix.gogo.runtime*.jar there?");
            }
            pause();
        }
    }

    /**
     * Waits (bounded) until a statement's command is registered, so scripts never race the
     * registration: until the command exists, or every bundle has finished starting and a short
     * grace period ({@code strata.command.grace}) has passed without it (a typo: let Gogo say
     * "Command not found"), or at most {@code strata.command.wait} seconds.
     */
    private void awaitCommand(GogoSession session, String statement) {
        String name = CommandSplitter.commandName(statement);
        if (name == null) {
            return;
        }
        long deadline = deadline(config.seconds("strata.command.wait", 30));
        long graceNanos = TimeUnit.MILLISECONDS.toNanos(config.seconds("strata.command.grace", 2) * 1000);
        long settledSince = 0;
        while (!session.hasCommand(name) && System.nanoTime() - deadline < 0 && !stopping.get()) {
            if (allBundlesStarted()) {
                long now = System.nanoTime();
                if (settledSince == 0) {
                    settledSince = now;
                } else if (now - settledSince > graceNanos) {
                    return;
                }
            } else {
                settledSince = 0;
            }
            pause();
        }
    }

    private boolean allBundlesStarted() {
        for (Bundle b : framework.getBundleContext().getBundles()) {
            boolean fragment = b.getHeaders("").get(Constants.FRAGMENT_HOST) != null;
            int state = b.getState();
            if (fragment ? state == Bundle.INSTALLED : state == Bundle.STARTING) {
                return false;
            }
        }
        return true;
    }

    /**
     * Waits (bounded, {@code strata.settle.timeout}) until the configured stack is up (see
     * {@link Readiness}); returns the problems left, empty when it is.
     */
    private List<String> settle(GogoSession session) {
        return new Readiness(framework.getBundleContext()).await(session, config.seconds("strata.settle.timeout", 20), stopping::get);
    }

    private Thread startWatchdog(long seconds, boolean stopsAfterwards) {
        Thread t = new Thread(() -> {
            try {
                Thread.sleep(TimeUnit.SECONDS.toMillis(seconds));
            } catch (InterruptedException e) {
                return; // finished in time
            }
            err.println("error: the commands did not finish within " + seconds + " s (--timeout / STRATA_TIMEOUT); stopping");
            err.flush();
            stop();
            Runtime.getRuntime().halt(124);
        }, "strata-watchdog");
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** The shutdown hook: SIGTERM/SIGINT (or System.exit after a normal stop, which is a no-op). */
    private void onSignal() {
        Framework fw = framework;
        if (fw == null || (fw.getState() & (Bundle.STARTING | Bundle.ACTIVE | Bundle.STOPPING)) == 0) {
            return;
        }
        if (stopping.get()) {
            return; // the main thread is stopping the framework and decides the exit status
        }
        signalled.set(true);
        boolean clean = stopToDeviceLevel() || stop();
        // the JVM's own exit status for a signal is 128+n; a daemon or shell asked to stop did its job
        if (options.daemon || options.interactive()) {
            Runtime.getRuntime().halt(clean ? 0 : 1);
        }
        Runtime.getRuntime().halt(143);
    }

    /**
     * A signal's prompt stop: lowers the start level to {@code strata.stop.level} (the target
     * bundles' level, below the device manager's), which stops the console, FileInstall, NBD and
     * the device manager — which closes every device top-down, so everything acknowledged is
     * durable — and then lets the process halt without stopping the libraries below (drivers,
     * policies, SCR, Configuration Admin, logging: nothing of theirs needs saving, and under load
     * their stop took longer than the devices' close). Returns false, and the caller stops the
     * whole framework, when the level is not configured, not below the current one, or not
     * reached within {@code strata.stop.timeout}.
     */
    private boolean stopToDeviceLevel() {
        String v = config.get("strata.stop.level", null);
        Framework fw = framework;
        if (v == null || fw == null) {
            return false;
        }
        int level;
        try {
            level = Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            return false;
        }
        FrameworkStartLevel fsl = fw.adapt(FrameworkStartLevel.class);
        if (fsl == null || fsl.getStartLevel() <= level) {
            return false;
        }
        stopping.set(true);
        CountDownLatch reached = new CountDownLatch(1);
        fsl.setStartLevel(level, event -> reached.countDown());
        long deadline = deadline(config.seconds("strata.stop.timeout", 60));
        try {
            while (!reached.await(50, TimeUnit.MILLISECONDS)) {
                // something else stops the whole framework meanwhile (the console on its way
                // out): then wait for that stop instead of a start level that never comes
                if (fw.getState() != Bundle.ACTIVE || System.nanoTime() - deadline > 0) {
                    return false;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
        try {
            Files.deleteIfExists(pidFile);
        } catch (IOException ignored) {
            // best effort
        }
        return true;
    }

    /** Stops the framework (once), waiting at most strata.stop.timeout; true if it stopped cleanly. */
    boolean stop() {
        Framework fw = framework;
        if (fw == null) {
            return true;
        }
        stopping.set(true);
        try {
            fw.stop();
        } catch (BundleException | IllegalStateException e) {
            err.println("strata: stopping the framework: " + Main.describe(e));
        }
        boolean clean = waitForStop(config.seconds("strata.stop.timeout", 60));
        try {
            Files.deleteIfExists(pidFile);
        } catch (IOException ignored) {
            // best effort
        }
        if (!clean) {
            err.println("error: the framework did not stop within " + config.seconds("strata.stop.timeout", 60)
                    + " s (strata.stop.timeout)");
        }
        return clean;
    }

    private boolean waitForStop(long seconds) {
        try {
            FrameworkEvent e = framework.waitForStop(TimeUnit.SECONDS.toMillis(seconds));
            if (e.getType() == FrameworkEvent.WAIT_TIMEDOUT) {
                return false;
            }
            if (seconds == 0) {
                try {
                    Files.deleteIfExists(pidFile);
                } catch (IOException ignored) {
                    // best effort
                }
            }
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static void stopQuietly(Framework fw) {
        try {
            fw.stop();
            fw.waitForStop(10_000);
        } catch (Exception ignored) {
            // already failing
        }
    }

    private static long deadline(long seconds) {
        return System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    }

    /** The launcher's polls (framework state, command table) run at 20 Hz. */
    private static void pause() {
        try {
            Thread.sleep(50);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted");
        }
    }
}
