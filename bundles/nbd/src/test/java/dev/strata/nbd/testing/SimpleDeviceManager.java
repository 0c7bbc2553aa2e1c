package dev.strata.nbd.testing;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceHandle;
import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceManager;
import dev.strata.api.DeviceState;
import dev.strata.api.InvalidArgumentException;
import dev.strata.testsupport.target.ForwardingBlockDevice;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A small DeviceManager for unit tests of the export service (until the core bundle is merged):
 * named devices added by the test, handles counted per holder.
 */
public final class SimpleDeviceManager implements DeviceManager {
    private final Map<String, BlockDevice> devices = new ConcurrentHashMap<>();
    public final Map<String, String> holders = new ConcurrentHashMap<>();
    /**
     * Devices whose target is not built yet, with why (as the core says, e.g. waiting for a
     * target type): WAITING_FOR_TARGET, and size 0 through info and handles, until removed.
     */
    public final Map<String, String> waiting = new ConcurrentHashMap<>();
    /** Counted down each time {@link #info} is asked about a waiting device (to know a client is waiting). */
    public volatile java.util.concurrent.CountDownLatch askedWhileWaiting = new java.util.concurrent.CountDownLatch(0);
    /** Devices created {@code --transient} (not stored, gone after a restart); every other one is persistent. */
    public final java.util.Set<String> transients = ConcurrentHashMap.newKeySet();

    public void add(String name, BlockDevice device) {
        devices.put(name, device);
    }

    @Override
    public Optional<DeviceInfo> info(String name) {
        BlockDevice d = devices.get(name);
        if (d == null) {
            return Optional.empty();
        }
        List<String> h = new ArrayList<>();
        holders.forEach((holder, dev) -> {
            if (dev.equals(name)) {
                h.add(holder);
            }
        });
        String why = waiting.get(name);
        if (why != null) {
            askedWhileWaiting.countDown();
        }
        return Optional.of(new DeviceInfo(name, "memory", Map.of(), why != null ? 0 : d.size(), d.blockSize(),
                why != null ? DeviceState.WAITING_FOR_TARGET : DeviceState.ACTIVE, List.of(), h, shared(h), null,
                !transients.contains(name), why));
    }

    @Override
    public <T, R> R withTarget(String name, Class<T> type, TargetCall<? super T, R> call) {
        throw new InvalidArgumentException("device '" + name + "' has no target here");
    }

    @Override
    public DeviceHandle open(String name, String holder) {
        BlockDevice d = devices.get(name);
        if (d == null) {
            throw new InvalidArgumentException("no device '" + name + "'");
        }
        holders.put(holder, name);
        return new Handle(d) {
            @Override
            public String name() {
                return name;
            }

            @Override
            public long size() {
                return waiting.containsKey(name) ? 0 : super.size();
            }

            @Override
            public void close() {
                holders.remove(holder);
            }
        };
    }

    @Override
    public DeviceInfo create(String name, String type, Map<String, String> arguments) {
        throw new UnsupportedOperationException();
    }

    @Override
    public void remove(String name) {
        if (holders.containsValue(name)) {
            throw new InvalidArgumentException("device '" + name + "' is in use");
        }
        devices.remove(name);
    }

    @Override
    public List<DeviceInfo> list() {
        return devices.keySet().stream().map(n -> info(n).orElseThrow()).toList();
    }

    @Override
    public Map<String, String> status(String name) {
        return Map.of();
    }

    @Override
    public void message(String name, String key, String value) {
        throw new UnsupportedOperationException();
    }

    @Override
    public void suspend(String name) {
        throw new UnsupportedOperationException();
    }

    @Override
    public void resume(String name) {
        throw new UnsupportedOperationException();
    }

    @Override
    public DeviceInfo reload(String name, String type, Map<String, String> arguments) {
        throw new UnsupportedOperationException();
    }

    @Override
    public void remove(String name, boolean force) {
        remove(name);
    }

    @Override
    public void message(String name, String key, String value, boolean persist) {
        message(name, key, value);
    }

    @Override
    public DeviceInfo reload(String name, String type, Map<String, String> arguments, boolean force) {
        return reload(name, type, arguments);
    }

    @Override
    public List<TargetType> targetTypes() {
        return List.of();
    }

    /** A device opened by a holder: forwards everything; {@code close()} ends the use. */
    private abstract static class Handle extends ForwardingBlockDevice implements DeviceHandle {
        Handle(BlockDevice d) {
            super(d);
        }

        @Override
        public abstract void close();
    }

    private static Map<String, dev.strata.api.Claim> shared(List<String> holders) {
        Map<String, dev.strata.api.Claim> m = new java.util.LinkedHashMap<>();
        holders.forEach(x -> m.put(x, dev.strata.api.Claim.SHARED));
        return m;
    }
}
