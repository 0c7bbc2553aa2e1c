package dev.strata.mirror.internal.io;

import dev.strata.api.BlockDevice;
import java.util.List;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * The legs of a mirror and their states. A leg {@link State#IN_SYNC} holds every acknowledged
 * write; one {@link State#RECOVERING} receives writes and resync copies but is never read and
 * never counts for an acknowledgement; one {@link State#OUT_OF_SYNC} gets no I/O at all.
 * States change under this object's monitor; reads of them are racy by design (a leg that fails
 * mid-request is handled by the request's own error path). The masks every request reads are
 * kept in volatile fields, rewritten on each change, so the I/O path takes no lock: with many
 * NBD workers on few cores a contended monitor per read parked threads and cost more than the
 * read of a page-cached file itself. For the same reason nothing a read touches is shared
 * between threads for writing but the chosen leg's load counter (its own cache line): round robin
 * turns per calling thread, reads are counted in {@link LongAdder}s.
 */
final class Legs {
    enum State { IN_SYNC, RECOVERING, OUT_OF_SYNC }

    /** Ints per leg in {@link #load}: 64 bytes, so legs' counters never share a cache line. */
    private static final int STRIDE = 16;
    /** Each thread's round-robin turn (per thread, so a read writes nothing another thread reads). */
    private static final ThreadLocal<int[]> TURN = ThreadLocal.withInitial(() -> new int[1]);

    private final List<String> names;
    private final List<BlockDevice> devices;
    private final State[] states;
    /** Requests in flight per leg (reads and writes), one cache line apart ({@link #STRIDE}). */
    private final AtomicIntegerArray load;
    private final LongAdder[] reads;
    private volatile int inSync;
    private volatile int writable;

    Legs(List<String> names, List<BlockDevice> devices, int inSyncMask) {
        this.names = List.copyOf(names);
        this.devices = List.copyOf(devices);
        this.states = new State[devices.size()];
        this.load = new AtomicIntegerArray((devices.size() + 1) * STRIDE);
        this.reads = new LongAdder[devices.size()];
        for (int i = 0; i < states.length; i++) {
            states[i] = (inSyncMask & (1 << i)) != 0 ? State.IN_SYNC : State.OUT_OF_SYNC;
            reads[i] = new LongAdder();
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

    /**
     * An in-sync leg to read from, not in {@code excluded}, or -1. Round robin takes the next leg
     * in this thread's turn; least loaded the leg with the fewest requests in flight (reads and
     * writes: a leg busy with writes or a slower leg gets fewer reads), ties broken by the turn so
     * equal legs share the reads.
     */
    int pick(ReadPolicy policy, int excluded) {
        int mask = inSyncMask() & ~excluded;
        if (mask == 0) {
            return -1;
        }
        if ((mask & (mask - 1)) == 0) {
            return Integer.numberOfTrailingZeros(mask);
        }
        int[] turn = TURN.get();
        int start = turn[0]++ & 0x7fffffff;
        int n = states.length;
        if (policy == ReadPolicy.LEAST_LOADED) {
            int best = -1;
            int bestLoad = Integer.MAX_VALUE;
            for (int k = 0; k < n; k++) {
                int i = (start + k) % n;
                if ((mask & (1 << i)) != 0) {
                    int l = load.get((i + 1) * STRIDE);
                    if (l < bestLoad) {
                        best = i;
                        bestLoad = l;
                    }
                }
            }
            return best;
        }
        int k = start % Integer.bitCount(mask);
        for (int i = 0; i < n; i++) {
            if ((mask & (1 << i)) != 0 && k-- == 0) {
                return i;
            }
        }
        return -1;
    }

    /** A request on {@code leg} starts ({@code +1}) or ends ({@code -1}). */
    void load(int leg, int delta) {
        load.getAndAdd((leg + 1) * STRIDE, delta);
    }

    /** {@link #load(int, int)} for every leg in {@code mask}. */
    void loadAll(int mask, int delta) {
        for (int m = mask; m != 0; m &= m - 1) {
            load(Integer.numberOfTrailingZeros(m), delta);
        }
    }

    int load(int leg) {
        return load.get((leg + 1) * STRIDE);
    }

    void countRead(int leg) {
        reads[leg].increment();
    }

    long reads(int leg) {
        return reads[leg].sum();
    }
}
