package dev.strata.mirror.internal.io;

import dev.strata.api.BlockDevice;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The legs of a mirror and their states. A leg {@link State#IN_SYNC} holds every acknowledged
 * write; one {@link State#RECOVERING} receives writes and resync copies but is never read and
 * never counts for an acknowledgement; one {@link State#OUT_OF_SYNC} gets no I/O at all.
 * States change under this object's monitor; reads of them are racy by design (a leg that fails
 * mid-request is handled by the request's own error path).
 */
final class Legs {
    enum State { IN_SYNC, RECOVERING, OUT_OF_SYNC }

    private final List<String> names;
    private final List<BlockDevice> devices;
    private final State[] states;
    private final AtomicInteger[] load;
    private final AtomicLong next = new AtomicLong();
    private final AtomicLong[] reads;

    Legs(List<String> names, List<BlockDevice> devices, int inSyncMask) {
        this.names = List.copyOf(names);
        this.devices = List.copyOf(devices);
        this.states = new State[devices.size()];
        this.load = new AtomicInteger[devices.size()];
        this.reads = new AtomicLong[devices.size()];
        for (int i = 0; i < states.length; i++) {
            states[i] = (inSyncMask & (1 << i)) != 0 ? State.IN_SYNC : State.OUT_OF_SYNC;
            load[i] = new AtomicInteger();
            reads[i] = new AtomicLong();
        }
    }

    int count() {
        return states.length;
    }

    String name(int leg) {
        return names.get(leg);
    }

    BlockDevice device(int leg) {
        return devices.get(leg);
    }

    /** The leg named {@code nameOrIndex}, or -1. */
    int find(String nameOrIndex) {
        int i = names.indexOf(nameOrIndex);
        if (i >= 0) {
            return i;
        }
        try {
            int n = Integer.parseInt(nameOrIndex);
            return n >= 0 && n < states.length ? n : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    synchronized State state(int leg) {
        return states[leg];
    }

    synchronized void state(int leg, State s) {
        states[leg] = s;
    }

    synchronized int inSyncMask() {
        int m = 0;
        for (int i = 0; i < states.length; i++) {
            if (states[i] == State.IN_SYNC) {
                m |= 1 << i;
            }
        }
        return m;
    }

    synchronized boolean allInSync() {
        return inSyncMask() == (1 << states.length) - 1;
    }

    /** The legs that receive writes: in sync and recovering. */
    synchronized int writableMask() {
        int m = 0;
        for (int i = 0; i < states.length; i++) {
            if (states[i] != State.OUT_OF_SYNC) {
                m |= 1 << i;
            }
        }
        return m;
    }

    /** The lowest in-sync leg (the resync source), or -1. */
    synchronized int first() {
        return Integer.numberOfTrailingZeros(inSyncMask()) < states.length ? Integer.numberOfTrailingZeros(inSyncMask()) : -1;
    }

    /** An in-sync leg to read from, not in {@code excluded}, or -1. */
    int pick(ReadPolicy policy, int excluded) {
        int mask = inSyncMask() & ~excluded;
        if (mask == 0) {
            return -1;
        }
        if (policy == ReadPolicy.LEAST_LOADED) {
            int best = -1;
            for (int i = 0; i < states.length; i++) {
                if ((mask & (1 << i)) != 0 && (best < 0 || load[i].get() < load[best].get())) {
                    best = i;
                }
            }
            return best;
        }
        int n = Integer.bitCount(mask);
        int k = (int) Long.remainderUnsigned(next.getAndIncrement(), n);
        for (int i = 0; i < states.length; i++) {
            if ((mask & (1 << i)) != 0 && k-- == 0) {
                return i;
            }
        }
        return -1;
    }

    AtomicInteger load(int leg) {
        return load[leg];
    }

    void countRead(int leg) {
        reads[leg].incrementAndGet();
    }

    long reads(int leg) {
        return reads[leg].get();
    }
}
