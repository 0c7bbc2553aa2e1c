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
 * mid-request is handled by the request's own error path). The masks every request reads are
 * kept in volatile fields, rewritten on each change, so the I/O path takes no lock: with many
 * NBD workers on few cores a contended monitor per read parked threads and cost more than the
 * read of a page-cached file itself.
 */
final class Legs {
    enum State { IN_SYNC, RECOVERING, OUT_OF_SYNC }

    private final List<String> names;
    private final List<BlockDevice> devices;
    private final State[] states;
    private final AtomicInteger[] load;
    private final AtomicLong next = new AtomicLong();
    private final AtomicLong[] reads;
    private volatile int inSync;
    private volatile int writable;

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
        publishMasks();
    }

    private void publishMasks() {
        int in = 0;
        int w = 0;
        for (int i = 0; i < states.length; i++) {
            if (states[i] == State.IN_SYNC) {
                in |= 1 << i;
            }
            if (states[i] != State.OUT_OF_SYNC) {
                w |= 1 << i;
            }
        }
        inSync = in;
        writable = w;
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
        publishMasks();
    }

    int inSyncMask() {
        return inSync;
    }

    boolean allInSync() {
        return inSync == (1 << states.length) - 1;
    }

    /** The legs that receive writes: in sync and recovering. */
    int writableMask() {
        return writable;
    }

    /** The lowest in-sync leg (the resync source), or -1. */
    int first() {
        int m = inSync;
        return m == 0 ? -1 : Integer.numberOfTrailingZeros(m);
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
