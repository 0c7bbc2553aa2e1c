package dev.strata.core.internal;

import org.osgi.framework.BundleContext;

/**
 * Opens the store the manager keeps its definitions in when Declarative Services runs it:
 * Configuration Admin's, from the {@code config} package, which offers this as a service
 * ({@code config.ConfigAdminStores}).
 *
 * <p>Why a service rather than the manager constructing that store: {@code config} implements this
 * package's {@link DefinitionStore}, decodes {@link DeviceDefinition}s and reports changes to the
 * {@link DeviceManagerImpl}, so it uses this package; were the manager to name its store's class
 * as well, the two packages would use each other. The rule, kept by {@code SourceShapeTest}: this
 * package names none of core's other packages but the leaf {@code internal.text}; {@code command},
 * {@code config}, {@code jmx} and {@code linear} use it, never the other way round.
 */
public interface StoreOpener {

    /** A store for {@code manager}, reporting outside changes to it once {@linkplain Store#register registered}. */
    Store open(DeviceManagerImpl manager);

    /** A {@link DefinitionStore} that hears of changes made from outside while it is registered. */
    interface Store extends DefinitionStore {

        /**
         * Starts hearing of definitions changed from outside, reporting them to the manager. Called
         * after the stored definitions were loaded.
         */
        void register(BundleContext context);

        /** Stops hearing of them. */
        void unregister();
    }
}
