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
import org.osgi.service.cm.ManagedServiceFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.strata.core.internal.DefinitionStore;
import dev.strata.core.internal.DeviceDefinition;
import dev.strata.core.internal.DeviceManagerImpl;

/**
 * Device definitions as Configuration Admin factory configurations (factory PID
 * {@code dev.strata.device}). The manager's own definitions are named factory configurations
 * ({@code dev.strata.device~NAME}, location {@code ?}); definitions from outside (FileInstall's
 * {@code deploy/dev.strata.device-NAME.cfg}, {@code cm} edits) may have any PID. A
 * {@link ManagedServiceFactory} registered for the factory PID hears about every configuration,
 * at start and on change; it only forwards the PID to the manager, which re-reads the current
 * properties (so a stale, late delivery never undoes a newer change).
 */
public final class ConfigAdminStore implements DefinitionStore, ManagedServiceFactory {
    private static final Logger LOG = LoggerFactory.getLogger(ConfigAdminStore.class);

    private final ConfigurationAdmin cm;
    private final DeviceManagerImpl manager;
    private volatile ServiceRegistration<ManagedServiceFactory> registration;
    /** FileInstall's watched directory (framework property {@code felix.fileinstall.dir}), or null. */
    private volatile String watchedDir;

    public ConfigAdminStore(ConfigurationAdmin cm, DeviceManagerImpl manager) {
        this.cm = cm;
        this.manager = manager;
    }

    public void register(BundleContext context) {
        watchedDir = context.getProperty(SourceFile.WATCHED_DIR);
        Hashtable<String, Object> props = new Hashtable<>();
        props.put(Constants.SERVICE_PID, DefinitionCodec.FACTORY_PID);
        props.put(Constants.SERVICE_DESCRIPTION, "Strata mapped device definitions");
        registration = context.registerService(ManagedServiceFactory.class, this, props);
    }

    public void unregister() {
        ServiceRegistration<ManagedServiceFactory> r = registration;
        registration = null;
        if (r != null) {
            try {
                r.unregister();
            } catch (IllegalStateException e) {
                // already gone with the bundle
            }
        }
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
        c.update(DefinitionCodec.merge(c.getProperties(), definition));
        return c.getPid();
    }

    @Override
    public void delete(String name) throws IOException {
        Configuration[] existing = find(name);
        if (existing != null) {
            for (Configuration c : existing) {
                c.delete();
            }
        }
    }

    @Override
    public Optional<DeviceDefinition> load(String key) throws IOException {
        Configuration[] cs = list("(" + Constants.SERVICE_PID + "=" + escape(key) + ")");
        if (cs == null || cs.length == 0) {
            return Optional.empty();
        }
        Dictionary<String, Object> props = cs[0].getProperties();
        if (props == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(DefinitionCodec.decode(key, props));
        } catch (IllegalArgumentException e) {
            LOG.error("ignoring configuration {}: {}", key, e.getMessage());
            return Optional.empty();
        }
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
            cs[0].update(DefinitionCodec.merge(cs[0].getProperties(), definition));
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
