package dev.strata.core.internal;

import java.io.IOException;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Future;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.strata.api.InvalidArgumentException;

/**
 * Keeps the devices and the {@link DefinitionStore} in step: writes the manager's changes,
 * loads every definition at start, and applies definitions created, changed or deleted from
 * outside (FileInstall, {@code cm}) in the order they happened, on one lane. Deliveries may be
 * stale: the current definition is re-read, and one equal to the device's is a no-op (that is
 * how the manager's own writes echo).
 */
final class StoreSync {
    private static final Logger LOG = LoggerFactory.getLogger(StoreSync.class);
    private final Core core;
    private volatile DefinitionStore store;

    StoreSync(Core core) {
        this.core = core;
    }

    void use(DefinitionStore s) {
        store = s;
    }

    /** Stores {@code def} as the definition of {@code d}. */
    void save(MappedDevice d, DeviceDefinition def) throws IOException {
        try {
            d.storeKey = store.save(def);
        } catch (IOException | RuntimeException e) {
            throw new IOException("could not persist device '" + d.name + "': " + e.getMessage(), e);
        }
    }

    /** Deletes the stored definition of {@code d}. */
    void delete(MappedDevice d) throws IOException {
        try {
            store.delete(d.name);
        } catch (IOException | RuntimeException e) {
            throw new IOException("could not delete the stored definition of '" + d.name + "': " + e.getMessage(), e);
        }
    }

    /**
     * Loads every stored definition and builds, on the calling thread and in dependency order,
     * every device whose factory and lower devices are there; the others wait (and are built in
     * the background when what they need appears).
     */
    void loadAll() {
        core.replacer.recover(store); // first: Attacher.recover leaves its journals alone
        Attacher.recover(store);
        try {
            for (String key : store.keys()) {
                applyStored(key);
            }
        } catch (IOException | RuntimeException e) {
            LOG.error("could not load the stored device definitions", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        boolean progress = true;
        while (progress && !core.stopped) {
            progress = false;
            for (MappedDevice d : core.graph.waiting()) {
                try {
                    core.reconciler.reconcile(d);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                progress |= d.target != null;
            }
        }
    }

    Future<?> changed(String key) {
        return core.tasks.submitInOrder(() -> applyStored(key));
    }

    Future<?> deleted(String key) {
        return core.tasks.submitInOrder(() -> applyDeleted(key));
    }

    private void applyStored(String key) throws IOException, InterruptedException {
        Optional<DeviceDefinition> loaded = store.load(key);
        if (loaded.isEmpty()) {
            if (!restoreIfInvalid(key)) {
                return;
            }
            loaded = store.load(key); // an emptied definition written back: applied now, as if read so
            if (loaded.isEmpty()) {
                return;
            }
        }
        DeviceDefinition def = loaded.get();
        if (def.stagedFor() != null) {
            return; // an attach's uncommitted half: applied by the attach itself, or resolved at start
        }
        if (core.graph.get(def.name()) == null) {
            // only for a device not built yet (at start): a running device's file may be in the
            // middle of being replaced, and FileInstall itself removes one whose file is deleted
            Optional<String> gone = store.forgetIfSourceGone(key);
            if (gone.isPresent()) {
                LOG.warn("device {}: its file {} was deleted while Strata was stopped; its definition is deleted too "
                        + "and the device is not created (the data on its devices is kept)", def.name(), gone.get());
                return;
            }
        }
        MappedDevice d;
        boolean stamp = false;
        boolean readSinceAbsent = false;
        while (true) {
            synchronized (core.graph.lock) {
                if (core.stopped) {
                    return;
                }
                d = core.graph.getLocked(def.name());
                if (d != null || readSinceAbsent) {
                    if (def.id() == null) {
                        // written before identities existed, or by hand (a deploy/ file replaced by one
                        // without the id): the device keeps the identity it has, a new one gets one now;
                        // either way it is stored with the definition (below), or the next start would
                        // stamp a new one and the caches over this device would refuse it
                        def = def.withId(d != null && d.definition.id() != null ? d.definition.id()
                                : java.util.UUID.randomUUID().toString());
                        stamp = true;
                    }
                    if (d == null) {
                        d = new MappedDevice(core::gateTimeoutNanos, def);
                        d.storeKey = key;
                        d.waitingFor = "target type '" + def.type() + "'";
                        core.graph.putLocked(d);
                        LOG.info("device {} defined by configuration {}: {}", def.name(), key, def.tableLine());
                        core.reconciler.schedule(d);
                        d = null;
                    }
                    break;
                }
            }
            // a removal deletes the definition before it takes the device out of the graph: a
            // definition loaded before a removal (the echo of a reload's write, say) must not bring
            // the removed device back, so it is read again once the device is seen absent
            Optional<DeviceDefinition> again = store.load(key);
            if (again.isEmpty() || again.get().stagedFor() != null) {
                return;
            }
            def = again.get();
            readSinceAbsent = true;
        }
        if (stamp) {
            stampIdentity(key, def); // outside the structure lock: the store does I/O
        }
        if (d == null) {
            return;
        }
        d.op.lockInterruptibly();
        try {
            if (d.removed) {
                return;
            }
            // read again under the device's lock: the definition loaded above may be the echo of
            // an older write of the manager's own (a cache:mode, a dev:message --persist) that a
            // newer one replaced while this task waited; applied, it would reload the device to
            // the older settings until the newer write's own echo came
            Optional<DeviceDefinition> current = store.load(key);
            if (current.isEmpty() || current.get().stagedFor() != null) {
                return;
            }
            def = current.get().id() == null ? current.get().withId(def.id()) : current.get();
            if (d.storeKey == null) {
                d.storeKey = key;
            } else if (!d.storeKey.equals(key)) {
                LOG.warn("configuration {} defines device {}, which configuration {} already defines; ignored", key,
                        def.name(), d.storeKey);
                return;
            }
            if (def.equals(d.definition)) {
                return;
            }
            if (d.target == null) {
                d.definition = def;
                core.graph.setLowers(d, List.of());
                core.graph.setClaims(d, java.util.Map.of());
                d.lastError = null;
                d.waitingFor = "target type '" + def.type() + "'";
                core.reconciler.schedule(d);
                return;
            }
            LOG.info("configuration of {} changed: reloading to {}", d.name, def.tableLine());
            try {
                core.reloader.reloadLocked(d, def, false, false);
            } catch (IOException | RuntimeException e) {
                d.lastError = "the changed configuration could not be applied: " + e.getMessage();
                LOG.error("device {}: {}; it keeps {}", d.name, d.lastError, d.definition.tableLine());
            }
        } finally {
            d.op.unlock();
        }
    }

    /**
     * A configuration of a running device that turned invalid (no {@code type}) is written back
     * from the device's definition. FileInstall writes every configuration change back into its
     * {@code deploy/*.cfg} file, truncating it first, and its own poller can read the file in
     * between: it then updates the configuration to the empty file, and writes that back too — the
     * device's definition was gone for good, and after a restart the device (and every device
     * stacked on it) no longer came up. Bad input changes nothing either: a file edited into an
     * invalid definition leaves the device as it is, and the file holds its definition again.
     * The same empty read can come before the manager has ever read the configuration (at the
     * first start, FileInstall's write-back of its own creation of it): see {@link #restoreEmptied}.
     *
     * @return whether a definition of no device yet was written back (to be applied now)
     */
    private boolean restoreIfInvalid(String key) throws IOException, InterruptedException {
        MappedDevice d = null;
        for (MappedDevice x : core.graph.all()) {
            if (key.equals(x.storeKey) && x.persistent) {
                d = x;
            }
        }
        if (d == null) {
            return restoreEmptied(key);
        }
        if (!store.holdsInvalid(key)) {
            return false;
        }
        d.op.lockInterruptibly();
        try {
            if (d.removed || !key.equals(d.storeKey) || !store.holdsInvalid(key)) {
                return false;
            }
            // a device not built yet may have been defined from this very read (a cut-short one,
            // read by a delivery before the store judged it): its last valid copy is what to restore
            DeviceDefinition back = d.target == null ? store.lastValid(key).orElse(d.definition) : d.definition;
            try {
                store.restore(key, back);
            } catch (IOException | RuntimeException e) {
                LOG.warn("device {}: configuration {} is not a valid definition and could not be written back ({}); "
                        + "the device keeps running on its definition", d.name, key, e.getMessage());
                return false;
            }
            LOG.warn("device {}: configuration {} was changed into an invalid definition (an emptied or half-written "
                    + "file?); the device keeps its definition, stored again: {}", d.name, key, back.tableLine());
            return false;
        } finally {
            d.op.unlock();
        }
    }

    /**
     * An emptied configuration (nothing but its file's name) of no device: the store's last
     * valid definition under {@code key} is written back. Without this, a definition FileInstall
     * emptied before this manager's delivery read it was lost for good: the delivery and the
     * empty update's both read nothing, and FileInstall wrote the empty configuration into the
     * file (0 bytes). A deletion is never undone: a deleted configuration is not emptied, and the
     * store forgets its copy when it is deleted. A user's edit that removed the type but kept
     * other keys is not emptied either: it gets its one line (from the store) and stays as it is.
     */
    private boolean restoreEmptied(String key) throws IOException {
        Optional<String> file = store.emptiedFile(key);
        if (file.isEmpty()) {
            return false;
        }
        Optional<DeviceDefinition> last = store.lastValid(key);
        if (last.isEmpty()) {
            LOG.warn("configuration {} holds no device definition: its file {} is empty; write the definition into "
                    + "the file (name, type, arg.KEY=VALUE), or delete the file", key, file.get());
            return false;
        }
        try {
            store.restore(key, last.get());
        } catch (IOException | RuntimeException e) {
            LOG.warn("device {}: configuration {} was emptied (its file {} was read while being rewritten) and could not "
                    + "be written back: {}; restore the file from {}", last.get().name(), key, file.get(), e.getMessage(),
                    last.get().tableLine());
            return false;
        }
        LOG.warn("device {}: configuration {} was emptied or cut short (FileInstall read its file {} while rewriting "
                + "it); its last definition is stored again: {}", last.get().name(), key, file.get(), last.get().tableLine());
        return true;
    }

    private void stampIdentity(String key, DeviceDefinition def) {
        try {
            String saved = store.save(def);
            if (!saved.equals(key)) {
                LOG.warn("device {}: its identity was stored under {}, not {}", def.name(), saved, key);
            }
            LOG.info("device {}: identity {} stamped into its definition", def.name(), def.id());
        } catch (IOException | RuntimeException e) {
            LOG.warn("device {}: could not store its new identity {}: {}", def.name(), def.id(), e.getMessage());
        }
    }

    private void applyDeleted(String key) throws IOException, InterruptedException {
        if (store.load(key).isPresent()) {
            return; // re-created meanwhile
        }
        MappedDevice d = null;
        for (MappedDevice x : core.graph.all()) {
            if (key.equals(x.storeKey)) {
                d = x;
            }
        }
        if (d == null) {
            return;
        }
        d.op.lockInterruptibly();
        try {
            if (d.removed) {
                return;
            }
            try {
                core.operations.removeLocked(d, false, false);
            } catch (InvalidArgumentException e) {
                d.storeKey = null;
                LOG.warn("the configuration of {} was deleted but {}; keeping the device (it will not come back "
                        + "after a restart unless created again)", d.name, e.getMessage());
            }
        } finally {
            d.op.unlock();
        }
    }
}
