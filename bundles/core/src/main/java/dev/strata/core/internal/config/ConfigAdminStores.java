package dev.strata.core.internal.config;

import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

import dev.strata.core.internal.DeviceManagerImpl;
import dev.strata.core.internal.StoreOpener;

/**
 * Opens a {@link ConfigAdminStore} for the manager. A service so that the manager gets its store
 * without naming this package, which uses the manager's (see {@link StoreOpener} for why). Its
 * reference to Configuration Admin is static, as the manager's was: the manager goes and comes back
 * with Configuration Admin.
 */
@Component(service = StoreOpener.class)
public final class ConfigAdminStores implements StoreOpener {
    @Reference
    ConfigurationAdmin configAdmin;

    @Override
    public Store open(DeviceManagerImpl manager) {
        return new ConfigAdminStore(configAdmin, manager);
    }
}
