package dev.strata.testsupport.crash;

import java.util.List;
import java.util.Random;

/**
 * Cuts the power of a set of {@link CrashableDevice}s after a number of mutating requests
 * (writes, zeroing, discards, flushes, counted over all of them): the request that exceeds the
 * budget crashes every device in {@code mode} and fails. Used to crash a target <em>inside</em>
 * an operation — after its 0th, 1st, 2nd … lower request — rather than between operations.
 */
public final class PowerSwitch {
    private final List<CrashableDevice> devices;
    private final CrashMode mode;
    private final Random random;
    private int budget;
    private boolean tripped;

    /** A switch that lets {@code budget} requests through, then crashes {@code devices} in {@code mode}. */
    public PowerSwitch(List<CrashableDevice> devices, int budget, CrashMode mode, Random random) {
        this.devices = List.copyOf(devices);
        this.budget = budget;
        this.mode = mode;
        this.random = random;
    }

    /** Connects every device to this switch. */
    public PowerSwitch arm() {
        for (CrashableDevice d : devices) {
            d.connect(this);
        }
        return this;
    }

    /** Counts one request; true if it must fail because the power is (now) off. */
    synchronized boolean consume() {
        if (tripped) {
            return true;
        }
        if (budget-- > 0) {
            return false;
        }
        trip();
        return true;
    }

    /** Cuts the power now (if not yet). */
    public synchronized void trip() {
        if (!tripped) {
            tripped = true;
            for (CrashableDevice d : devices) {
                d.crash(mode, random);
            }
        }
    }

    /** Whether the power has been cut. */
    public synchronized boolean tripped() {
        return tripped;
    }
}
