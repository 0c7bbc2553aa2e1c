package dev.strata.core.internal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.strata.api.Claim;
import dev.strata.api.DeviceInfo;
import dev.strata.api.Target;
import dev.strata.core.internal.text.Text;

/** Snapshots of the devices: {@code list}, {@code info}, {@code status}, the definitions. Takes no {@code op} lock. */
final class Inspection {
    private final Core core;

    Inspection(Core core) {
        this.core = core;
    }

    List<DeviceInfo> list() {
        List<DeviceInfo> out = new ArrayList<>();
        for (MappedDevice d : core.graph.all()) {
            if (!d.creating && !d.removed) {
                out.add(info(d));
            }
        }
        return out;
    }

    Optional<DeviceInfo> info(String name) {
        MappedDevice d = core.graph.get(name);
        return d == null || d.creating || d.removed ? Optional.empty() : Optional.of(info(d));
    }

    DeviceInfo info(MappedDevice d) {
        DeviceDefinition def = d.definition;
        List<String> holders;
        Map<String, Claim> claims;
        synchronized (core.graph.lock) {
            holders = core.graph.holdersLocked(d);
            claims = core.graph.holderClaimsLocked(d);
        }
        boolean built = d.target != null;
        return new DeviceInfo(d.name, def.type(), def.arguments(), built ? d.size : 0, d.blockSize, d.state(),
                d.lowers, holders, claims, def.id(), d.persistent, reason(d));
    }

    /**
     * Why a device has no target (what it waits for, and the last error if there is one), or
     * the last error of a device that runs (a changed configuration that could not be applied).
     */
    static String reason(MappedDevice d) {
        String err = d.lastError;
        if (d.target == null) {
            String w = d.waitingFor;
            if (w == null) {
                return err;
            }
            w = w.replace(" (see last_error)", "");
            return err == null ? "waiting for " + w : "waiting for " + w + ": " + err;
        }
        return err;
    }

    /** The definitions, in dependency order (lower devices first), as {@code dev:table} prints them. */
    List<DeviceDefinition> definitions() {
        List<DeviceDefinition> out = new ArrayList<>();
        for (MappedDevice d : core.graph.bottomUp()) {
            out.add(d.definition);
        }
        return out;
    }

    Map<String, String> status(String name) {
        MappedDevice d = core.graph.require(name);
        Map<String, String> m = new LinkedHashMap<>();
        m.put("state", Text.label(d.state()));
        m.put("type", d.definition.type());
        m.put("size", Long.toString(d.target != null ? d.size : 0));
        m.put("block_size", Integer.toString(d.blockSize));
        m.put("in_flight", Long.toString(d.gate.inFlight()));
        m.put("waiting", Integer.toString(d.gate.waiting()));
        m.put("io_reads", Long.toString(d.reads.sum()));
        m.put("io_writes", Long.toString(d.writes.sum()));
        m.put("io_read_bytes", Long.toString(d.readBytes.sum()));
        m.put("io_written_bytes", Long.toString(d.writtenBytes.sum()));
        m.put("io_flushes", Long.toString(d.flushes.sum()));
        m.put("io_discards", Long.toString(d.discards.sum()));
        m.put("io_write_zeroes", Long.toString(d.zeroes.sum()));
        m.put("io_errors", Long.toString(d.errors.sum()));
        String lowerOf = d.definition.lowerOf();
        if (lowerOf != null) {
            m.put("lower_of", lowerOf); // cache:detach of that device collapses back onto this one
        }
        long pause = d.lastSwapPauseNanos;
        if (pause >= 0) {
            m.put("last_swap_pause_us", Long.toString(pause / 1000));
        }
        String waitingFor = d.waitingFor;
        if (d.target == null && waitingFor != null) {
            m.put("waiting_for", waitingFor);
        }
        String err = d.lastError;
        if (err != null) {
            m.put("last_error", err);
        }
        // the target is held while it is read, so that it cannot be closed under status()
        if (d.holds.enter()) {
            try {
                Target t = d.target;
                if (t != null) {
                    Map<String, String> ts = t.status();
                    if (ts != null) {
                        ts.forEach((k, v) -> m.put(m.containsKey(k) ? "target_" + k : k, v));
                    }
                }
            } catch (RuntimeException e) {
                m.put("status_error", String.valueOf(e.getMessage()));
            } finally {
                d.holds.exit();
            }
        }
        return m;
    }
}
