package dev.strata.core.internal;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/** An in-memory {@link DefinitionStore}; it can be told to fail, and keeps its contents across managers. */
public final class MemStore implements DefinitionStore {
    private final Map<String, DeviceDefinition> byKey = new LinkedHashMap<>();
    private final AtomicInteger next = new AtomicInteger();
    volatile boolean failSaves;
    /** When set, the next {@link #load} answers this instead (once): a read that a newer write overtook. */
    volatile DeviceDefinition staleOnce;

    public MemStore() {
    }

    /** A store holding {@code contents} (a {@link #snapshot}), as a crash left it. */
    public MemStore(Map<String, DeviceDefinition> contents) {
        byKey.putAll(contents);
        next.set(contents.size() + 1000);
    }

    @Override
    public synchronized java.util.List<String> keys() {
        java.util.List<String> keys = new java.util.ArrayList<>(byKey.keySet());
        java.util.Collections.reverse(keys); // newest first: upper devices before the ones below
        return keys;
    }

    @Override
    public synchronized String save(DeviceDefinition def) throws IOException {
        if (failSaves) {
            throw new IOException("store is read-only (test)");
        }
        for (Map.Entry<String, DeviceDefinition> e : byKey.entrySet()) {
            if (e.getValue().name().equals(def.name())) {
                e.setValue(def);
                return e.getKey();
            }
        }
        String key = "dev.strata.device~" + def.name() + "#" + next.incrementAndGet();
        byKey.put(key, def);
        return key;
    }

    @Override
    public synchronized void delete(String name) {
        byKey.values().removeIf(d -> d.name().equals(name));
    }

    @Override
    public synchronized Optional<DeviceDefinition> load(String key) {
        DeviceDefinition stale = staleOnce;
        if (stale != null) {
            staleOnce = null;
            return Optional.of(stale);
        }
        return Optional.ofNullable(byKey.get(key));
    }

    public synchronized Map<String, DeviceDefinition> snapshot() {
        return new LinkedHashMap<>(byKey);
    }

    /** Adds a definition "from outside" and returns its key. */
    synchronized String putExternal(DeviceDefinition def) {
        String key = "external-" + next.incrementAndGet();
        byKey.put(key, def);
        return key;
    }

    /** Keys whose definitions came from files deleted since (see {@link #forgetIfSourceGone}). */
    private final Map<String, String> goneSources = new LinkedHashMap<>();

    /** Marks the definition under {@code key} as made from {@code file}, which is now deleted. */
    synchronized void sourceDeleted(String key, String file) {
        goneSources.put(key, file);
    }

    @Override
    public synchronized Optional<String> forgetIfSourceGone(String key) {
        String file = goneSources.remove(key);
        if (file != null) {
            byKey.remove(key);
        }
        return Optional.ofNullable(file);
    }

    /** Keys holding a configuration that is not a valid definition (an emptied deploy/ file). */
    private final java.util.Set<String> invalid = new java.util.HashSet<>();

    /** Turns what is stored under {@code key} into an invalid definition, as FileInstall's empty read does. */
    synchronized void makeInvalid(String key) {
        byKey.remove(key);
        invalid.add(key);
    }

    @Override
    public synchronized boolean holdsInvalid(String key) {
        return invalid.contains(key);
    }

    @Override
    public synchronized void restore(String key, DeviceDefinition def) {
        invalid.remove(key);
        byKey.put(key, def);
    }

    synchronized void removeKey(String key) {
        byKey.remove(key);
    }
}
