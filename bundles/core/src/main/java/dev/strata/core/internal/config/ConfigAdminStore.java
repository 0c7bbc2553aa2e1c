package dev.strata.core.internal.config;

import java.io.IOException;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.Optional;

import org.osgi.framework.BundleContext;
import org.osgi.framework.Constants;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.cm.ConfigurationEvent;
import org.osgi.service.cm.ConfigurationListener;
import org.osgi.service.cm.ManagedServiceFactory;
import org.osgi.service.cm.SynchronousConfigurationListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.strata.core.internal.DeviceDefinition;
import dev.strata.core.internal.DeviceManagerImpl;
import dev.strata.core.internal.StoreOpener;

/**
 * Device definitions as Configuration Admin factory configurations (factory PID
 * {@code dev.strata.device}). The manager's own definitions are named factory configurations
 * ({@code dev.strata.device~NAME}, location {@code ?}); definitions from outside (FileInstall's
 * {@code deploy/dev.strata.device-NAME.cfg}, {@code cm} edits) may have any PID. A
 * {@link ManagedServiceFactory} registered for the factory PID hears about every configuration,
 * at start and on change; it only forwards the PID to the manager, which re-reads the current
 * properties (so a stale, late delivery never undoes a newer change).
 *
 * <p>It is also a {@link SynchronousConfigurationListener}: Configuration Admin calls it inside
 * every update, on the updating thread, and it keeps the last valid definition seen under each
 * PID. That copy is what an <em>emptied</em> configuration is restored from: FileInstall writes
 * every change back into its {@code deploy/*.cfg} in place (truncate, then write), its own
 * creation of a configuration too, and its poll can read the file in between and update the
 * configuration to nothing but the file's name. By the time the manager's delivery runs, the
 * configuration may already be empty, so a copy taken at delivery time would be too late. A
 * file over FileInstall's 8 KiB write buffer can also be read cut short rather than empty; such a
 * read ({@link TornRead}) is treated as an emptied one and does not replace the copy.
 *
 * <p>Where FileInstall's write-back is off (the distribution), the store writes those files itself
 * ({@link CfgWriteBack}: atomically, the file before the configuration, only over the file as it was
 * read), so that no file of Strata's is ever read partly written; the emptied and cut-read handling
 * stays for writers it does not control (a host that keeps FileInstall's write-back, an editor that
 * writes a file in place).
 */
public final class ConfigAdminStore implements StoreOpener.Store, ManagedServiceFactory, SynchronousConfigurationListener {
    private static final Logger LOG = LoggerFactory.getLogger(ConfigAdminStore.class);

    private final ConfigurationAdmin cm;
    private final DeviceManagerImpl manager;
    private volatile ServiceRegistration<ManagedServiceFactory> registration;
    private volatile ServiceRegistration<SynchronousConfigurationListener> listenerRegistration;
    /** The last valid definition seen under each PID of ours (see the class comment). */
    private final java.util.Map<String, DeviceDefinition> lastValid = new java.util.concurrent.ConcurrentHashMap<>();
    /**
     * Per PID, the keys of a configuration judged a half-rewritten read of its file
     * ({@link TornRead}): while the configuration still holds exactly these, it is treated as
     * emptied — not loaded, written back from the last valid definition.
     */
    private final java.util.Map<String, java.util.Map<String, String>> torn = new java.util.concurrent.ConcurrentHashMap<>();
    /** Per PID made from a file, the largest size (bytes) its file had at any update ({@link TornRead}). */
    private final java.util.Map<String, Long> largestFile = new java.util.concurrent.ConcurrentHashMap<>();
    /** FileInstall's watched directory (framework property {@code felix.fileinstall.dir}), or null. */
    private volatile String watchedDir;
    /** Writes the {@code .cfg} files of configurations made from them, where FileInstall does not ({@link CfgWriteBack}). */
    private volatile CfgWriteBack files = new CfgWriteBack(false, name -> null);
    private volatile ServiceRegistration<ConfigurationListener> filesRegistration;

    public ConfigAdminStore(ConfigurationAdmin cm, DeviceManagerImpl manager) {
        this.cm = cm;
        this.manager = manager;
    }

    /**
     * For tests: a store that writes the {@code .cfg} files itself (FileInstall's write-back off),
     * with {@code properties} as the framework's properties ({@code ${name}} in a file).
     */
    public ConfigAdminStore(ConfigurationAdmin cm, DeviceManagerImpl manager, java.util.function.UnaryOperator<String> properties) {
        this(cm, manager);
        this.files = new CfgWriteBack(true, properties);
        this.watchedDir = properties.apply(SourceFile.WATCHED_DIR);
        files.start(cm, watchedDir);
    }

    @Override
    public void register(BundleContext context) {
        watchedDir = context.getProperty(SourceFile.WATCHED_DIR);
        files = CfgWriteBack.of(context);
        if (files.enabled()) {
            files.start(cm, watchedDir);
            filesRegistration = context.registerService(ConfigurationListener.class, files, null);
        }
        // first, so that no update made from now on is missed (FileInstall starts after core)
        listenerRegistration = context.registerService(SynchronousConfigurationListener.class, this, null);
        Hashtable<String, Object> props = new Hashtable<>();
        props.put(Constants.SERVICE_PID, DefinitionCodec.FACTORY_PID);
        props.put(Constants.SERVICE_DESCRIPTION, "Strata mapped device definitions");
        registration = context.registerService(ManagedServiceFactory.class, this, props);
    }

    @Override
    public void unregister() {
        ServiceRegistration<?> r = registration;
        registration = null;
        unregister(r);
        r = listenerRegistration;
        listenerRegistration = null;
        unregister(r);
        r = filesRegistration;
        filesRegistration = null;
        unregister(r);
    }

    private static void unregister(ServiceRegistration<?> r) {
        if (r != null) {
            try {
                r.unregister();
            } catch (IllegalStateException e) {
                // already gone with the bundle
            }
        }
    }

    /**
     * Inside every update and deletion of a configuration, on the thread that made it: remembers
     * the valid definitions of ours, and tells the manager of every update. The managed service
     * factory's delivery is not enough: Felix's {@code Configuration.update} is not atomic, two
     * threads updating one configuration at once (FileInstall's poll storing an empty read while
     * the manager stamps an identity) can give both updates the same revision, and the delivery
     * of the second is then dropped as already delivered — the device ran on while its
     * configuration and file stayed empty. A delivery too many is harmless: the manager re-reads
     * the current properties. Only reads and queues; never fails the caller's update.
     */
    @Override
    public void configurationEvent(ConfigurationEvent event) {
        if (!DefinitionCodec.FACTORY_PID.equals(event.getFactoryPid())) {
            return;
        }
        String pid = event.getPid();
        if (event.getType() == ConfigurationEvent.CM_DELETED) {
            lastValid.remove(pid); // a deletion is never undone: nothing is restored from before it
            torn.remove(pid);
            largestFile.remove(pid);
            return;
        }
        if (event.getType() != ConfigurationEvent.CM_UPDATED) {
            return;
        }
        try {
            Dictionary<String, Object> props = properties(pid);
            long largest = props == null ? -1 : largestFile.merge(pid, TornRead.fileSize(props), Math::max);
            if (props != null && TornRead.isTorn(props, lastValid.get(pid), largest)) {
                torn.put(pid, TornRead.definitionKeys(props)); // the last valid one stays the copy to restore
            } else if (props != null) {
                torn.remove(pid);
                lastValid.put(pid, DefinitionCodec.decode(pid, props));
            }
        } catch (IOException | RuntimeException e) {
            // not a valid definition (kept: the last valid one stays), or not readable now
        }
        manager.definitionChanged(pid);
    }

    @Override
    public String getName() {
        return "Strata mapped devices";
    }

    @Override
    public void updated(String pid, Dictionary<String, ?> properties) {
        manager.definitionChanged(pid);
    }

    @Override
    public void deleted(String pid) {
        manager.definitionDeleted(pid);
    }

    @Override
    public java.util.List<String> keys() throws IOException {
        Configuration[] cs = list("(" + ConfigurationAdmin.SERVICE_FACTORYPID + "=" + DefinitionCodec.FACTORY_PID + ")");
        java.util.List<String> out = new java.util.ArrayList<>();
        if (cs != null) {
            for (Configuration c : cs) {
                out.add(c.getPid());
            }
        }
        return out;
    }

    @Override
    public String save(DeviceDefinition definition) throws IOException {
        Configuration[] existing = find(definition.name());
        Configuration c = existing != null && existing.length > 0 ? existing[0]
                : cm.getFactoryConfiguration(DefinitionCodec.FACTORY_PID, definition.name(), "?");
        files.update(c, DefinitionCodec.merge(c.getProperties(), definition));
        return c.getPid();
    }

    @Override
    public void delete(String name) throws IOException {
        Configuration[] existing = find(name);
        if (existing != null) {
            for (Configuration c : existing) {
                files.delete(c);
            }
        }
    }

    @Override
    public Optional<DeviceDefinition> load(String key) throws IOException {
        Dictionary<String, Object> props = properties(key);
        if (props == null || tornNow(key, props)) {
            return Optional.empty(); // a half-read one is the manager's to report (StoreSync), as an emptied one
        }
        try {
            return Optional.of(DefinitionCodec.decode(key, props));
        } catch (IllegalArgumentException e) {
            if (!emptied(props)) { // an emptied one is the manager's to report (StoreSync), with what it did
                LOG.error("ignoring configuration {}: {}", key, e.getMessage());
            }
            return Optional.empty();
        }
    }

    @Override
    public Optional<String> emptiedFile(String key) throws IOException {
        Dictionary<String, Object> props = properties(key);
        if (props == null || !emptied(props) && !tornNow(key, props)) {
            return Optional.empty();
        }
        String source = String.valueOf(props.get(DefinitionCodec.FILEINSTALL_FILENAME));
        if (SourceFile.gone(source, watchedDir).isPresent()) {
            return Optional.empty(); // its file was deleted: FileInstall is removing the device, not emptying its file
        }
        return Optional.of(source.substring(source.lastIndexOf('/') + 1));
    }

    @Override
    public Optional<DeviceDefinition> lastValid(String key) {
        return Optional.ofNullable(lastValid.get(key));
    }

    /** Whether the configuration under {@code key} still holds exactly what was judged a half-rewritten read. */
    private boolean tornNow(String key, Dictionary<String, ?> props) {
        java.util.Map<String, String> t = torn.get(key);
        return t != null && t.equals(TornRead.definitionKeys(props));
    }

    /**
     * Made from a file and holding nothing else: no property but Configuration Admin's own and
     * FileInstall's file name (what FileInstall stores for an empty file). An edit that removed
     * the type but kept other keys is not emptied: that one is the user's.
     */
    private static boolean emptied(Dictionary<String, Object> props) {
        if (props.get(DefinitionCodec.FILEINSTALL_FILENAME) == null) {
            return false;
        }
        for (String k : java.util.Collections.list(props.keys())) {
            if (!k.equals(DefinitionCodec.FILEINSTALL_FILENAME) && !k.startsWith("service.")) {
                return false;
            }
        }
        return true;
    }

    /** The configuration's properties, or, if they are a stale read of its file, what the file holds ({@link CfgWriteBack#newer}). */
    private Dictionary<String, Object> properties(String pid) throws IOException {
        Configuration[] cs = list("(" + Constants.SERVICE_PID + "=" + escape(pid) + ")");
        Dictionary<String, Object> p = cs == null || cs.length == 0 ? null : cs[0].getProperties();
        return p == null ? null : files.newer(p);
    }

    @Override
    public Optional<String> forgetIfSourceGone(String key) throws IOException {
        Configuration[] cs = list("(" + Constants.SERVICE_PID + "=" + escape(key) + ")");
        if (cs == null || cs.length == 0 || cs[0].getProperties() == null) {
            return Optional.empty();
        }
        Object source = cs[0].getProperties().get(DefinitionCodec.FILEINSTALL_FILENAME);
        Optional<String> gone = SourceFile.gone(source == null ? null : source.toString(), watchedDir);
        if (gone.isPresent()) {
            cs[0].delete();
        }
        return gone;
    }

    @Override
    public boolean holdsInvalid(String key) throws IOException {
        Configuration[] cs = list("(" + Constants.SERVICE_PID + "=" + escape(key) + ")");
        if (cs == null || cs.length == 0 || cs[0].getProperties() == null) {
            return false;
        }
        Object source = cs[0].getProperties().get(DefinitionCodec.FILEINSTALL_FILENAME);
        if (SourceFile.gone(source == null ? null : source.toString(), watchedDir).isPresent()) {
            return false; // its file was deleted: FileInstall is removing the device, not emptying its file
        }
        if (tornNow(key, cs[0].getProperties())) {
            return true;
        }
        try {
            DefinitionCodec.decode(key, cs[0].getProperties());
            return false;
        } catch (IllegalArgumentException e) {
            return true;
        }
    }

    @Override
    public void restore(String key, DeviceDefinition definition) throws IOException {
        Configuration[] cs = list("(" + Constants.SERVICE_PID + "=" + escape(key) + ")");
        if (cs == null || cs.length == 0) {
            return; // deleted meanwhile: a deletion is not undone
        }
        try {
            files.restore(cs[0], DefinitionCodec.merge(cs[0].getProperties(), definition));
        } catch (IllegalStateException e) {
            // FileInstall locks (read-only) or deletes the configuration of a file it is removing
            throw new IOException("configuration " + key + " cannot be written now: " + e.getMessage(), e);
        }
    }

    private Configuration[] find(String name) throws IOException {
        return list("(&(" + ConfigurationAdmin.SERVICE_FACTORYPID + "=" + DefinitionCodec.FACTORY_PID + ")("
                + DefinitionCodec.NAME + "=" + escape(name) + "))");
    }

    private Configuration[] list(String filter) throws IOException {
        try {
            return cm.listConfigurations(filter);
        } catch (InvalidSyntaxException e) {
            throw new IOException("bad configuration filter " + filter + ": " + e.getMessage(), e);
        }
    }

    private static String escape(String s) {
        StringBuilder sb = new StringBuilder();
        for (char c : s.toCharArray()) {
            if (c == '\\' || c == '*' || c == '(' || c == ')') {
                sb.append('\\');
            }
            sb.append(c);
        }
        return sb.toString();
    }
}
