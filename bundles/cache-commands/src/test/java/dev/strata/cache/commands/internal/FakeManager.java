package dev.strata.cache.commands.internal;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.strata.api.CacheTarget;
import dev.strata.api.DeviceHandle;
import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceManager;
import dev.strata.api.DeviceState;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Target;

/**
 * A device manager that keeps the {@link DeviceManager} contract the commands rely on — and no
 * more, so the commands cannot lean on core's interim behaviour: {@code withTarget} holds the
 * target (a reload meanwhile is a contract violation and fails the test), {@code message} with
 * {@code persist} records the setting, and a reload of a cache that still holds dirty blocks into
 * a {@code linear} target is refused unless forced (the dirty guard).
 */
final class FakeManager implements DeviceManager {

    static final class Dev {
        final String name;
        String type;
        Map<String, String> arguments;
        Target target;

        Dev(String name, String type, Map<String, String> arguments, Target target) {
            this.name = name;
            this.type = type;
            this.arguments = arguments;
            this.target = target;
        }
    }

    final Map<String, Dev> devices = new LinkedHashMap<>();
    /** Settings kept in definitions: "device key" → value. */
    final Map<String, String> persisted = new LinkedHashMap<>();
    final List<String> reloads = new ArrayList<>();
    /** Devices suspended by {@link #suspend} (their targets' suspend() ran). */
    final java.util.Set<String> suspended = new java.util.HashSet<>();
    /** When set, the next reload fails with this (after the checks, before anything changes). */
    volatile IOException failNextReload;
    /** The next failed reload also leaves the caller's thread interrupted (Ctrl-C in the swap). */
    volatile boolean interruptWithNextFailure;
    private int held;

    FakeManager add(String name, String type, Map<String, String> arguments, Target target) {
        devices.put(name, new Dev(name, type, new LinkedHashMap<>(arguments), target));
        return this;
    }

    Target target(String name) {
        return devices.get(name).target;
    }

    private Dev require(String name) {
        Dev d = devices.get(name);
        if (d == null) {
            throw new InvalidArgumentException("no device named '" + name + "'; see dev:list");
        }
        return d;
    }

    @Override
    public Optional<DeviceInfo> info(String name) {
        Dev d = devices.get(name);
        if (d == null) {
            return Optional.empty();
        }
        return Optional.of(new DeviceInfo(d.name, d.type, Map.copyOf(d.arguments), d.target.size(), d.target.blockSize(),
                suspended.contains(name) ? DeviceState.SUSPENDED : DeviceState.ACTIVE, lowers(d), List.of()));
    }

    /** The devices a definition's arguments name, as the manager lists them under a device. */
    private List<String> lowers(Dev d) {
        return d.arguments.values().stream().filter(v -> devices.containsKey(v) && !v.equals(d.name)).distinct().toList();
    }

    @Override
    public List<DeviceInfo> list() {
        return devices.keySet().stream().map(n -> info(n).orElseThrow()).toList();
    }

    @Override
    public Map<String, String> status(String name) {
        Dev d = require(name);
        Map<String, String> m = new LinkedHashMap<>();
        m.put("state", "active");
        m.put("type", d.type);
        m.put("size", Long.toString(d.target.size()));
        m.put("block_size", Integer.toString(d.target.blockSize()));
        m.put("io_read_bytes", "0");
        d.target.status().forEach((k, v) -> m.put(m.containsKey(k) ? "target_" + k : k, v));
        return m;
    }

    @Override
    public void message(String name, String key, String value) throws IOException {
        message(name, key, value, true);
    }

    @Override
    public void message(String name, String key, String value, boolean persist) throws IOException {
        Dev d = require(name);
        d.target.message(key, value);
        if (persist && d.target.status().containsKey(key)) { // as the real manager: settings only, not actions
            persisted.put(name + " " + key, value);
        }
    }

    @Override
    public DeviceInfo reload(String name, String type, Map<String, String> arguments) throws IOException {
        return reload(name, type, arguments, false);
    }

    @Override
    public synchronized DeviceInfo reload(String name, String type, Map<String, String> arguments, boolean force)
            throws IOException {
        if (held > 0) {
            throw new AssertionError("reload while a withTarget call holds a target: the real manager would wait forever");
        }
        Dev d = require(name);
        if (!"linear".equals(type)) {
            throw new InvalidArgumentException("fake manager: no target type '" + type + "'");
        }
        Dev lower = require(arguments.get("device"));
        if (!force && d.target instanceof CacheTarget c && c.dirtyBlocks() > 0) {
            throw new InvalidArgumentException(name + " holds " + c.dirtyBlocks() + " dirty blocks; cache:detach " + name);
        }
        IOException fail = failNextReload;
        if (fail != null) {
            failNextReload = null;
            if (interruptWithNextFailure) {
                interruptWithNextFailure = false;
                Thread.currentThread().interrupt(); // as Ctrl-C during the swap leaves it
            }
            throw fail;
        }
        d.target.close();
        d.type = type;
        d.arguments = new LinkedHashMap<>(arguments);
        d.target = new PlainTarget("linear", lower.target);
        reloads.add(name + " " + type + " " + arguments);
        return info(name).orElseThrow();
    }

    @Override
    public <T, R> R withTarget(String name, Class<T> type, TargetCall<? super T, R> call)
            throws IOException, InterruptedException {
        Target t;
        synchronized (this) {
            Dev d = require(name);
            t = d.target;
            if (!type.isInstance(t)) {
                throw new InvalidArgumentException("device '" + name + "' is a " + d.type + " device, not a cache");
            }
            held++;
        }
        try {
            return call.call(type.cast(t));
        } finally {
            synchronized (this) {
                held--;
            }
        }
    }

    @Override
    public DeviceInfo create(String name, String type, Map<String, String> arguments) {
        throw new UnsupportedOperationException();
    }

    @Override
    public void remove(String name) {
        throw new UnsupportedOperationException();
    }

    @Override
    public void remove(String name, boolean force) {
        throw new UnsupportedOperationException();
    }

    @Override
    public synchronized void suspend(String name) throws IOException {
        require(name).target.suspend();
        suspended.add(name);
    }

    @Override
    public synchronized void resume(String name) throws IOException {
        require(name).target.resume();
        suspended.remove(name);
    }

    @Override
    public DeviceHandle open(String name, String holder) {
        throw new UnsupportedOperationException();
    }

    @Override
    public List<TargetType> targetTypes() {
        return List.of();
    }
}
