package dev.strata.nbd.internal.command;

import dev.strata.api.DeviceManager;
import dev.strata.nbd.internal.server.NbdServer;
import java.io.IOException;
import java.util.Dictionary;
import org.osgi.framework.BundleContext;
import org.osgi.framework.Constants;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.cm.ConfigurationException;
import org.osgi.service.cm.ManagedServiceFactory;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The NBD server in the framework: owns the {@link NbdServer} and the {@link ExportService}, and
 * receives stored exports from Configuration Admin (factory PID {@value ExportSpec#FACTORY_PID}),
 * including {@code deploy/dev.strata.nbd.export-NAME.cfg} files read by FileInstall.
 *
 * <p>Framework properties: {@code strata.nbd.bind} (default address, 127.0.0.1),
 * {@code strata.nbd.workers} (requests run at once per connection, 16),
 * {@code strata.socket.activation} (true: started by socket activation, set by {@code bin/strata};
 * exports with {@code inherited=true} listen on the inherited socket).
 */
@Component(service = {ManagedServiceFactory.class, NbdComponent.class}, immediate = true,
        property = Constants.SERVICE_PID + "=" + ExportSpec.FACTORY_PID)
public class NbdComponent implements ManagedServiceFactory {
    private static final Logger LOG = LoggerFactory.getLogger(NbdComponent.class);

    @Reference
    DeviceManager devices;
    @Reference
    ConfigurationAdmin configAdmin;

    private NbdServer server;
    private ExportService exports;

    @Activate
    void activate(BundleContext context) {
        NbdServer.Settings d = NbdServer.Settings.defaults();
        int workers = intProperty(context, "strata.nbd.workers", d.workers());
        server = new NbdServer(new NbdServer.Settings(workers, d.handshakeTimeoutMillis(), d.inputBuffer(), d.poolBudget()));
        exports = new ExportService(devices, new ConfigAdminStore(configAdmin), server,
                context.getProperty("strata.nbd.bind"), 1000,
                Boolean.parseBoolean(context.getProperty("strata.socket.activation")));
    }

    @Deactivate
    void deactivate() {
        exports.close();
        server.close();
    }

    public ExportService exports() {
        return exports;
    }

    @Override
    public String getName() {
        return "Strata NBD exports";
    }

    @Override
    public void updated(String pid, Dictionary<String, ?> properties) throws ConfigurationException {
        try {
            exports.configured(pid, ExportSpec.fromProperties(properties));
        } catch (IllegalArgumentException e) {
            // One line in the log, and the export stays as it was. A ConfigurationException would
            // make Config Admin print a stack trace on stderr — seen for a transient update while
            // FileInstall re-read a .cfg being rewritten (BinStrataIT failed on it in CI).
            LOG.warn("NBD export configuration {} ignored: {}", pid, e.getMessage());
        }
    }

    @Override
    public void deleted(String pid) {
        exports.deleted(pid);
    }

    private static int intProperty(BundleContext context, String key, int dflt) {
        String v = context.getProperty(key);
        try {
            return v == null ? dflt : Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            LOG.warn("{}={} is not a number; using {}", key, v, dflt);
            return dflt;
        }
    }

    /** Stores exports as factory configurations. */
    static final class ConfigAdminStore implements ExportStore {
        private final ConfigurationAdmin cm;

        ConfigAdminStore(ConfigurationAdmin cm) {
            this.cm = cm;
        }

        @Override
        public String create(ExportSpec spec) throws IOException {
            Configuration c = cm.createFactoryConfiguration(ExportSpec.FACTORY_PID, "?");
            String pid = c.getPid();
            c.update(spec.toProperties());
            return pid;
        }

        @Override
        public void delete(String id) throws IOException {
            try {
                Configuration[] found = cm.listConfigurations("(" + Constants.SERVICE_PID + "=" + id + ")");
                if (found != null) {
                    for (Configuration c : found) {
                        c.delete();
                    }
                }
            } catch (InvalidSyntaxException e) {
                throw new IOException("cannot look up configuration " + id, e);
            }
        }
    }
}
