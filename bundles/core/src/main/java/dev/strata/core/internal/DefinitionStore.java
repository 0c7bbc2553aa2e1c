package dev.strata.core.internal;

import java.io.IOException;
import java.util.Optional;

/**
 * Where device definitions persist (Configuration Admin in OSGi, a map in unit tests). Keys are
 * opaque (a configuration PID). A store reports changes made from outside (a {@code .cfg} file
 * dropped in {@code deploy/}, a {@code cm} edit) to {@link DeviceManagerImpl#definitionChanged}
 * and {@link DeviceManagerImpl#definitionDeleted}; it reports the manager's own writes too (as
 * echoes, which the manager recognises).
 */
public interface DefinitionStore {

    /** The keys of every stored definition (to load them all at start). */
    java.util.List<String> keys() throws IOException;

    /** Creates or updates the definition of {@code definition.name()}; returns its key. */
    String save(DeviceDefinition definition) throws IOException;

    /** Deletes the definition(s) of device {@code name}; nothing if there is none. */
    void delete(String name) throws IOException;

    /**
     * The current definition under {@code key}, empty if it was deleted or is not a valid
     * definition (which the store logs).
     */
    Optional<DeviceDefinition> load(String key) throws IOException;

    /**
     * If the definition under {@code key} was made from a file (FileInstall's
     * {@code deploy/*.cfg}) that no longer exists, deletes it and returns the file's name; else
     * empty. The manager asks at start, before it builds a device: FileInstall removes the
     * configuration of a file deleted while it runs, but not of one deleted while Strata was
     * stopped, which would otherwise come back at every start.
     */
    default Optional<String> forgetIfSourceGone(String key) throws IOException {
        return Optional.empty();
    }

    /**
     * Whether a configuration exists under {@code key} that is not a valid definition (no
     * {@code type}, say): {@link #load} answers empty for it as for a deleted one.
     */
    default boolean holdsInvalid(String key) throws IOException {
        return false;
    }

    /**
     * If the configuration under {@code key} was made from a file (FileInstall's
     * {@code deploy/*.cfg}, which still exists) and holds nothing else — what FileInstall stores
     * when it reads its own half-written file — the file's name; else empty. An empty read, not
     * an edit: {@link #load} answers empty for it.
     */
    default Optional<String> emptiedFile(String key) throws IOException {
        return Optional.empty();
    }

    /**
     * The last valid definition this store saw under {@code key} since it was last deleted (kept
     * in memory from every update, whoever made it), to restore an emptied configuration from.
     */
    default Optional<DeviceDefinition> lastValid(String key) {
        return Optional.empty();
    }

    /**
     * Writes {@code definition} back under {@code key}, over an invalid configuration there (its
     * other properties, such as FileInstall's file name, are kept).
     */
    default void restore(String key, DeviceDefinition definition) throws IOException {
        // nothing by default: a store that cannot hold invalid definitions has none to restore
    }
}
