package dev.strata.nbd.internal.command;

import dev.strata.api.DeviceHandle;
import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceState;
import dev.strata.api.DeviceManager;
import dev.strata.api.InvalidArgumentException;
import dev.strata.nbd.internal.server.Export;
import dev.strata.nbd.internal.server.ExportLimits;
import dev.strata.nbd.internal.server.InheritedSocket;
import dev.strata.nbd.internal.server.NbdServer;
import dev.strata.nbd.internal.session.TlsMode;
import dev.strata.nbd.internal.tls.ClientAllowList;
import dev.strata.nbd.internal.tls.PskKeys;
import dev.strata.nbd.internal.tls.TlsConfig;
import dev.strata.nbd.internal.tls.TlsCredentials;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The exports: what {@code nbd:export} / {@code nbd:unexport} change and what stored
 * configurations bring back after a restart.
 *
 * <p>An export started by a command is validated and started first, then stored; nothing is
 * started or stored when anything is wrong. An export that comes from a stored configuration
 * and whose device is not there yet (or whose port is busy) waits and is retried every
 * {@code retryMillis}. Each running export holds its device open as {@code nbd:NAME}, so the
 * device cannot be removed while exported. All methods are synchronized on this object.
 */
public final class ExportService implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ExportService.class);
    private static final long DRAIN_MILLIS = 30_000;

    /** One export this service knows about, running or waiting. */
    private static final class Entry {
        final ExportSpec spec;
        String id;
        DeviceHandle handle;
        Export export;
        String problem = "";

        Entry(ExportSpec spec) {
            this.spec = spec;
        }
    }

    private final DeviceManager devices;
    private final ExportStore store;
    private final NbdServer server;
    private final String defaultBind;
    /** Strata was started by socket activation: exports with {@code inherited} use that socket. */
    private final boolean activated;
    private final Map<String, Entry> byName = new LinkedHashMap<>();
    private final ScheduledExecutorService retry;

    public ExportService(DeviceManager devices, ExportStore store, NbdServer server, String defaultBind, long retryMillis) {
        this(devices, store, server, defaultBind, retryMillis, false);
    }

    /**
     * @param activated true when this process was started by socket activation (the framework
     *                  property {@code strata.socket.activation}, set by {@code bin/strata})
     */
    public ExportService(DeviceManager devices, ExportStore store, NbdServer server, String defaultBind, long retryMillis,
            boolean activated) {
        this.activated = activated;
        this.devices = devices;
        this.store = store;
        this.server = server;
        this.defaultBind = defaultBind == null || defaultBind.isEmpty() ? ExportSpec.DEFAULT_BIND : defaultBind;
        this.retry = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "nbd-export-retry");
            t.setDaemon(true);
            return t;
        });
        retry.scheduleWithFixedDelay(this::retryWaiting, retryMillis, retryMillis, TimeUnit.MILLISECONDS);
    }

    /**
     * Starts an export for a user and stores it.
     *
     * @param bind null when the user gave no {@code --bind}: the default address is used, and it
     *             must be a loopback address
     * @throws InvalidArgumentException unknown device, name taken, bad or non-loopback address,
     *         port in use; nothing is started or stored
     */
    public Export export(String device, String name, String bind, int port, boolean readOnly) throws IOException {
        return export(device, name, bind, port, readOnly, TlsMode.OFF, null, false, null);
    }

    /** As below, without client certificates. */
    public Export export(String device, String name, String bind, int port, boolean readOnly, TlsMode tls,
            String tlsCreds) throws IOException {
        return export(device, name, bind, port, readOnly, tls, tlsCreds, false, null);
    }

    /**
     * As above, with TLS ({@code tlsCreds}: the credentials directory, needed unless TLS is off;
     * {@code allow}: client subjects separated by {@code ;}, which implies {@code verifyPeer}).
     *
     * @throws InvalidArgumentException also for unusable credentials
     */
    public Export export(String device, String name, String bind, int port, boolean readOnly,
            TlsMode tls, String tlsCreds, boolean verifyPeer, String allow) throws IOException {
        return export(device, name, bind, port, readOnly, tls, tlsCreds, verifyPeer, allow, "", "");
    }

    /** As below, without limits. */
    public Export export(String device, String name, String bind, int port, boolean readOnly,
            TlsMode tls, String tlsCreds, boolean verifyPeer, String allow, String unix, String unixMode)
            throws IOException {
        return export(device, name, bind, port, readOnly, tls, tlsCreds, verifyPeer, allow, unix, unixMode, 0, 0);
    }

    /**
     * As above; a non-empty {@code unix} exports on that Unix socket path instead of TCP
     * ({@code unixMode}: the socket file's octal mode, empty for the umask's);
     * {@code maxConnections} clients at once (0: any number), connections idle for
     * {@code idleTimeoutMillis} dropped (0: never).
     */
    public Export export(String device, String name, String bind, int port, boolean readOnly,
            TlsMode tls, String tlsCreds, boolean verifyPeer, String allow, String unix, String unixMode,
            int maxConnections, long idleTimeoutMillis) throws IOException {
        return export(device, name, bind, port, readOnly, tls, tlsCreds, verifyPeer, allow, unix, unixMode,
                maxConnections, idleTimeoutMillis, "", false);
    }

    /**
     * As above; a non-empty {@code tlsPsk} (a psktool key file, or a directory with keys.psk)
     * makes the TLS use pre-shared keys instead of the certificates of {@code tlsCreds}; with
     * {@code inherited} the export listens on the socket inherited by socket activation when
     * Strata was started so, else on its address as given.
     */
    /** How every refusal of {@code nbd:export} begins: the command's name as Gogo shows it. */
    static final String EXPORT = "nbd:export: ";

    public synchronized Export export(String device, String name, String bind, int port, boolean readOnly,
            TlsMode tls, String tlsCreds, boolean verifyPeer, String allow, String unix, String unixMode,
            int maxConnections, long idleTimeoutMillis, String tlsPsk, boolean inherited) throws IOException {
        boolean explicit = bind != null && !bind.isEmpty();
        if (explicit && unix != null && !unix.isBlank()) {
            throw new InvalidArgumentException("nbd:export: --bind and --unix exclude each other; give one of them");
        }
        ExportSpec spec = new ExportSpec(device, name, explicit ? bind : defaultBind, port, readOnly, tls, tlsCreds,
                verifyPeer, allow, unix, unixMode, maxConnections, idleTimeoutMillis, tlsPsk, inherited);
        InetAddress address = spec.isUnix() ? InetAddress.getLoopbackAddress() : resolve(spec.bind());
        if (!explicit && !address.isLoopbackAddress()) {
            throw new InvalidArgumentException("nbd:export: the default address " + spec.bind()
                    + " is not a loopback address; give --bind " + spec.bind() + " explicitly to export to the network");
        }
        if (byName.containsKey(spec.name())) {
            throw new InvalidArgumentException("nbd:export: an export named '" + spec.name()
                    + "' exists already; choose another --name or nbd:unexport it first");
        }
        java.util.Optional<dev.strata.api.DeviceInfo> info = devices.info(spec.device());
        if (info.isEmpty()) {
            throw new InvalidArgumentException("nbd:export: no device '" + spec.device() + "'; dev:list shows the devices");
        }
        Entry e = new Entry(spec);
        try {
            start(e, address);
        } catch (InvalidArgumentException refused) {
            // the server's and the TLS loaders' refusals are shared with configured exports;
            // at the console they name the command, as every other nbd:export refusal does
            throw refused.getMessage().startsWith(EXPORT) ? refused : new InvalidArgumentException(EXPORT + refused.getMessage());
        }
        try {
            // the export of a transient device is transient too: stored, it would outlive the
            // device, wait for it at every later start and keep --daemon from ever being ready
            e.id = info.get().persistent() ? store.create(spec) : null;
        } catch (IOException | RuntimeException ex) {
            stop(e);
            throw new IOException("nbd:export: cannot store the export: " + ex.getMessage(), ex);
        }
        byName.put(spec.name(), e);
        LOG.info("exported device '{}' as '{}' on {}{}{}", spec.device(), spec.name(), where(e),
                spec.readOnly() ? " (read-only)" : "", spec.tls() == TlsMode.OFF ? "" : " (TLS " + spec.tls().text() + ")");
        warnIfOpen(e, address);
        return e.export;
    }

    /** Whether the export {@code name} is stored (comes back after a restart); false for one of a transient device. */
    public synchronized boolean stored(String name) {
        Entry e = byName.get(name);
        return e != null && e.id != null;
    }

    /**
     * Stops an export and forgets it.
     *
     * @throws InvalidArgumentException if there is no such export
     */
    public synchronized void unexport(String name) throws IOException {
        Entry e = byName.get(name);
        if (e == null) {
            throw new InvalidArgumentException("nbd:unexport: no export named '" + name + "'; nbd:exports lists them");
        }
        byName.remove(name);
        stop(e);
        if (e.id != null) {
            store.delete(e.id);
        }
        LOG.info("unexported '{}'", name);
    }

    /** A stored configuration appeared or changed (also called for each one at startup). */
    public synchronized void configured(String id, ExportSpec spec) {
        for (Entry e : byName.values()) {
            if (id.equals(e.id)) {
                if (e.spec.equals(spec)) {
                    return;
                }
                byName.remove(e.spec.name());
                stop(e);
                break;
            }
        }
        Entry existing = byName.get(spec.name());
        if (existing != null) {
            if (existing.id == null || !existing.id.equals(id)) {
                LOG.warn("configuration {} exports '{}' but that name is taken by configuration {}; ignored", id,
                        spec.name(), existing.id);
            }
            return;
        }
        Entry e = new Entry(spec);
        e.id = id;
        byName.put(spec.name(), e);
        tryStart(e);
    }

    /** A stored configuration was deleted. */
    public synchronized void deleted(String id) {
        for (Entry e : new ArrayList<>(byName.values())) {
            if (id.equals(e.id)) {
                byName.remove(e.spec.name());
                stop(e);
                LOG.info("unexported '{}' (its configuration was deleted)", e.spec.name());
            }
        }
    }

    /** What {@code nbd:exports} shows, one map per export in a stable order. */
    public synchronized List<Map<String, String>> status() {
        List<Map<String, String>> out = new ArrayList<>();
        for (Entry e : byName.values()) {
            Map<String, String> m = new LinkedHashMap<>();
            m.put("name", e.spec.name());
            m.put("device", e.spec.device());
            m.put("address", address(e));
            m.put("readonly", Boolean.toString(e.spec.readOnly()));
            m.put("tls", e.spec.tls().text());
            m.put("state", e.export != null ? "serving" : "waiting: " + e.problem);
            m.put("connections", Integer.toString(e.export != null ? e.export.connectionCount() : 0));
            m.put("bytes_read", Long.toString(e.export != null ? e.export.bytesRead() : 0));
            m.put("bytes_written", Long.toString(e.export != null ? e.export.bytesWritten() : 0));
            m.put("requests", Long.toString(e.export != null ? e.export.requests() : 0));
            m.put("errors", Long.toString(e.export != null ? e.export.errors() : 0));
            if (e.export != null) {
                e.export.latency(m);
            }
            out.add(m);
        }
        return out;
    }

    /** Where a running export listens, as logged: {@code host:port}, {@code unix:PATH}, or {@code inherited:…} of either. */
    private static String where(Entry e) {
        if (e.export.inherited()) {
            return "inherited:" + (e.export.unixPath() != null ? "unix:" + e.export.unixPath()
                    : e.export.bindAddress() + ":" + e.export.port());
        }
        return e.spec.isUnix() ? "unix:" + e.export.unixPath() : e.spec.bind() + ":" + e.export.port();
    }

    /** The {@code address} column of nbd:exports (also for a waiting export: where it will listen). */
    private String address(Entry e) {
        if (e.export != null) {
            return where(e);
        }
        if (e.spec.inherited() && activated) {
            return "inherited";
        }
        return e.spec.isUnix() ? "unix:" + e.spec.unix() : e.spec.bind() + ":" + e.spec.port();
    }

    private void retryWaiting() {
        synchronized (this) {
            for (Entry e : byName.values()) {
                if (e.export == null) {
                    tryStart(e);
                }
            }
        }
    }

    private void tryStart(Entry e) {
        try {
            if (devices.info(e.spec.device()).isEmpty()) {
                e.problem = "device '" + e.spec.device() + "' does not exist yet";
                return;
            }
            InetAddress address = e.spec.isUnix() ? InetAddress.getLoopbackAddress() : resolve(e.spec.bind());
            start(e, address);
            e.problem = "";
            warnIfOpen(e, address);
            LOG.info("exported device '{}' as '{}' on {}", e.spec.device(), e.spec.name(), where(e));
        } catch (IOException | RuntimeException ex) {
            String p = ex.getMessage();
            if (!Objects.equals(p, e.problem)) {
                LOG.warn("export '{}' cannot start yet: {}", e.spec.name(), p);
            }
            e.problem = p;
        }
    }

    /** Security default written down in docs/nbd.md: beyond loopback, say so when TLS is not required. */
    private static void warnIfOpen(Entry e, InetAddress address) {
        String w = e.export.inherited() ? inheritedWarning(e.spec, e.export) : openWarning(e.spec, address);
        if (w != null) {
            LOG.warn(w);
        }
    }

    /** The start-up warning for an export reachable beyond loopback without required TLS; null if none. */
    static String openWarning(ExportSpec spec, InetAddress address) {
        if (address.isLoopbackAddress() || spec.tls() == TlsMode.REQUIRE) {
            return null;
        }
        return "export '" + spec.name() + "' on " + spec.bind() + " is reachable beyond this machine without"
                + " --tls=require: anyone who can connect can read " + (spec.readOnly() ? "it" : "and write it")
                + (spec.tls() == TlsMode.ON ? " without TLS" : " in plaintext");
    }

    /** The warning of {@link #openWarning} for an export on an inherited TCP socket (systemd's ListenStream=10809 is every address). */
    static String inheritedWarning(ExportSpec spec, Export export) {
        if (export.unixPath() != null) {
            return null;
        }
        InetAddress a;
        try {
            a = InetAddress.getByName(export.bindAddress());
        } catch (UnknownHostException ex) {
            return null; // a literal address always parses
        }
        String w = openWarning(spec, a);
        return w == null ? null : w.replace(" on " + spec.bind() + " ", " on the inherited socket " + where(export) + " ");
    }

    private static String where(Export export) {
        return export.bindAddress() + ":" + export.port();
    }

    private void start(Entry e, InetAddress address) throws IOException {
        TlsConfig tls = e.spec.tls() == TlsMode.OFF ? TlsConfig.OFF
                : e.spec.isPsk() ? TlsConfig.psk(e.spec.tls(), PskKeys.load(Path.of(e.spec.tlsPsk())))
                : new TlsConfig(e.spec.tls(), TlsCredentials.load(Path.of(e.spec.tlsCreds())), e.spec.tlsVerifyPeer(),
                        new ClientAllowList(e.spec.allowList()));
        ExportLimits limits = new ExportLimits(e.spec.maxConnections(), e.spec.idleTimeoutMillis());
        if (e.spec.inherited() && activated && devices.info(e.spec.device()).map(i -> i.size() == 0).orElse(true)) {
            // the client that activated us is connected already (queued on the socket): it must
            // not be answered before the device is built (a size of 0); retried every second
            throw new InvalidArgumentException("device '" + e.spec.device() + "' is not built yet");
        }
        DeviceHandle h = devices.open(e.spec.device(), "nbd:" + e.spec.name());
        try {
            e.export = e.spec.inherited() && activated
                    ? server.addInheritedExport(e.spec.name(), "device " + e.spec.device(), h, InheritedSocket.get(),
                            e.spec.readOnly(), tls, limits)
                    : e.spec.isUnix()
                    ? server.addUnixExport(e.spec.name(), "device " + e.spec.device(), h, Path.of(e.spec.unix()),
                            e.spec.unixMode(), e.spec.readOnly(), limits)
                    : server.addExport(e.spec.name(), "device " + e.spec.device(), h,
                            new InetSocketAddress(address, e.spec.port()), e.spec.readOnly(), tls, limits);
            e.handle = h;
            // every export, not only an inherited one, may be asked for before its device is
            // built (a cache formatting on start): the negotiation then waits or refuses, never
            // tells a size of 0
            String device = e.spec.device();
            e.export.readiness(() -> notActive(device));
        } catch (IOException | RuntimeException ex) {
            h.close();
            throw ex;
        }
    }

    /**
     * Why {@code device} cannot be served now, or null; a suspended device can (its I/O waits at
     * the gate). Worth a client's wait: a device whose first build runs (waiting for nothing
     * named) and one waiting for its target type, which is what a device shows while its policy
     * bundle is updated or still starting (a fraction of a second; refusing there would turn a
     * hot update into failed connections). Refused at once: one waiting for anything else named
     * (a failed build retried later, a lower device, invalid arguments) — clients time out long
     * before it comes up.
     */
    /** How the device manager's reason names a wait for a target type ({@code waiting for target type 'writeboost'}). */
    static final String TYPE_WAIT = "waiting for target type '";

    private Export.NotReady notActive(String device) {
        DeviceInfo i = devices.info(device).orElse(null);
        if (i == null) {
            return Export.NotReady.refuse("device '" + device + "' is gone");
        }
        if (i.state() == DeviceState.WAITING_FOR_TARGET) {
            boolean named = i.waitingFor() != null && !i.waitingFor().isBlank();
            String why = "device '" + device + "' is not active yet" + (named ? ": " + i.waitingFor() : "");
            boolean transient_ = !named || i.waitingFor().startsWith(TYPE_WAIT);
            return transient_ ? Export.NotReady.waitFor(why) : Export.NotReady.refuse(why);
        }
        return null;
    }

    private void stop(Entry e) {
        if (e.export != null) {
            server.removeExport(e.spec.name(), DRAIN_MILLIS);
            e.export = null;
        }
        if (e.handle != null) {
            try {
                e.handle.close();
            } catch (IOException ex) {
                LOG.warn("closing device '{}' for export '{}': {}", e.spec.device(), e.spec.name(), ex.toString());
            }
            e.handle = null;
        }
    }

    private static InetAddress resolve(String bind) {
        try {
            return InetAddress.getByName(bind);
        } catch (UnknownHostException e) {
            throw new InvalidArgumentException("nbd:export: cannot resolve bind address '" + bind + "'");
        }
    }

    /** Stops every export (they stay stored and come back with the next start). */
    @Override
    public void close() {
        retry.shutdownNow();
        synchronized (this) {
            for (Entry e : byName.values()) {
                stop(e);
            }
            byName.clear();
        }
    }
}
