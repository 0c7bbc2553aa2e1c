package dev.strata.cache.writeboost.internal.command;

import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceManager;
import dev.strata.api.InvalidArgumentException;
import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.felix.service.command.Descriptor;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Gogo commands of scope {@code cache} for writeboost devices. Thin: they parse, call the
 * {@link DeviceManager} (status, message, reload) and return lines.
 */
@Component(service = CacheCommands.class, property = {"osgi.command.scope=cache", "osgi.command.function=stats",
        "osgi.command.function=set", "osgi.command.function=writeback", "osgi.command.function=detach"})
public final class CacheCommands {
    static final long POLL_MILLIS = 200;
    /** Give up when writeback makes no progress for this long. */
    static final long STALL_MILLIS = TimeUnit.MINUTES.toMillis(10);

    @Reference
    DeviceManager manager;

    PrintStream out = null;

    private PrintStream out() {
        return out != null ? out : System.out;
    }

    @Descriptor("show a cache device's counters and tunables")
    public List<String> stats(@Descriptor("device name") String device) throws IOException {
        Map<String, String> s = manager.status(device);
        List<String> lines = new ArrayList<>();
        int w = 0;
        for (String k : s.keySet()) {
            w = Math.max(w, k.length());
        }
        for (Map.Entry<String, String> e : s.entrySet()) {
            lines.add(String.format("%-" + w + "s  %s", e.getKey(), e.getValue()));
        }
        return lines;
    }

    @Descriptor("set a runtime tunable of a cache device")
    public String set(@Descriptor("device name") String device, @Descriptor("tunable, e.g. writeback_threshold") String key,
            @Descriptor("new value") String value) throws IOException {
        manager.message(device, key, value);
        return device + ": " + key + "=" + value;
    }

    @Descriptor("write back every dirty block of a cache device; returns when it is clean")
    public String writeback(@Descriptor("device name") String device) throws IOException {
        requireWriteboost(device);
        manager.message(device, "writeback", "all");
        long left = waitClean(device);
        return device + ": clean (" + left + " dirty blocks)";
    }

    @Descriptor("write back everything, then replace the cache by a plain linear mapping of its backing device")
    public String detach(@Descriptor("device name") String device) throws IOException {
        DeviceInfo info = requireWriteboost(device);
        String backing = info.arguments().get("backing");
        manager.message(device, "write_around", "true");
        try {
            manager.message(device, "writeback", "all");
            waitClean(device);
            manager.message(device, "invalidate", "all");
            manager.reload(device, "linear", Map.of("device", backing));
        } catch (IOException | RuntimeException e) {
            try {
                manager.message(device, "write_around", "false");
            } catch (IOException | RuntimeException ignored) {
                // the device may be gone or already linear; the first error is the one to report
            }
            throw e;
        }
        return device + ": detached; now linear over " + backing;
    }

    private DeviceInfo requireWriteboost(String device) {
        DeviceInfo info = manager.info(device)
                .orElseThrow(() -> new InvalidArgumentException("no device named '" + device + "'"));
        if (!"writeboost".equals(info.type())) {
            throw new InvalidArgumentException("device '" + device + "' is a " + info.type()
                    + " device, not a writeboost cache");
        }
        return info;
    }

    private long waitClean(String device) throws IOException {
        long start = -1;
        long best = Long.MAX_VALUE;
        long lastProgress = System.nanoTime();
        PrintStream o = out();
        while (true) {
            Map<String, String> s = manager.status(device);
            long dirty = Long.parseLong(s.getOrDefault("dirty_blocks", "0"));
            String err = s.getOrDefault("writeback_error", "");
            if (start < 0) {
                start = dirty;
            }
            long done = start == 0 ? 100 : Math.max(0, (start - dirty) * 100 / start);
            o.print("\rwriteback " + device + ": " + dirty + " dirty blocks left (" + done + "%)"
                    + (err.isEmpty() ? "" : "; last error: " + err) + "   ");
            o.flush();
            if (dirty == 0) {
                o.println();
                return 0;
            }
            if (dirty < best) {
                best = dirty;
                lastProgress = System.nanoTime();
            } else if (System.nanoTime() - lastProgress > TimeUnit.MILLISECONDS.toNanos(STALL_MILLIS)) {
                o.println();
                throw new IOException(device + ": writeback made no progress for " + STALL_MILLIS / 1000
                        + " s (" + dirty + " dirty blocks left)" + (err.isEmpty() ? "" : ": " + err));
            }
            try {
                Thread.sleep(POLL_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException(device + ": interrupted");
            }
        }
    }
}
