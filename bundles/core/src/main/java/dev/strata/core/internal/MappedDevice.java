package dev.strata.core.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceState;
import dev.strata.api.Target;

/**
 * A named device: a definition, the current target (null while waiting for it) and the I/O gate.
 *
 * <h2>Invariants</h2>
 * <ul>
 * <li>While the gate is open, {@link #target} is not null and does not change: a target is
 * swapped, closed or dropped only with the gate closed and drained.</li>
 * <li>Lifecycle changes (attach, detach, suspend, resume, reload, remove) hold {@link #op};
 * structural fields ({@link #lowers}, {@link #handles}, {@link #removed}, {@link #creating}) are
 * written under the manager's structure lock.</li>
 * </ul>
 */
final class MappedDevice {
    final String name;
    final Gate gate = new Gate();
    final ReentrantLock op = new ReentrantLock();
    final AtomicBoolean reconcilePending = new AtomicBoolean();
    final Set<Handle> handles = ConcurrentHashMap.newKeySet();
    final BlockDevice view = new LowerView();
    private final java.util.function.LongSupplier gateTimeoutNanos;

    volatile DeviceDefinition definition;
    volatile Target target;
    volatile FactoryEntry factory;
    volatile List<String> lowers = List.of();
    /** How this device holds each of its lower devices (granted under the structure lock). */
    volatile java.util.Map<String, dev.strata.api.Claim> claims = java.util.Map.of();
    /** False for a transient device: its definition is never stored. */
    volatile boolean persistent = true;
    /** Where the build of this device while it is created reports progress (a console's line), or null. */
    volatile dev.strata.api.DeviceManager.BuildProgress buildProgress;
    /** Calls running with the target ({@code withTarget}, {@code status}). */
    final TargetHolds holds = new TargetHolds();
    volatile long size;
    volatile int blockSize = BlockDevice.SECTOR;
    volatile boolean userSuspended;
    volatile boolean removed;
    volatile boolean creating;
    volatile String storeKey;
    volatile String waitingFor;
    volatile String lastError;
    /** When a build that failed with an I/O error is tried again ({@link BuildRetry}). */
    final BuildRetry.Backoff buildRetry = new BuildRetry.Backoff();
    /** Set while {@code cache:replace} copies this device: every completed write marks it ({@link Replacer}). */
    volatile WriteTracker tracker;
    /** How long the gate was closed by the last attach swap, in nanoseconds (-1: none yet). */
    volatile long lastSwapPauseNanos = -1;

    final LongAdder reads = new LongAdder();
    final LongAdder writes = new LongAdder();
    final LongAdder readBytes = new LongAdder();
    final LongAdder writtenBytes = new LongAdder();
    final LongAdder flushes = new LongAdder();
    final LongAdder discards = new LongAdder();
    final LongAdder zeroes = new LongAdder();
    final LongAdder errors = new LongAdder();

    MappedDevice(java.util.function.LongSupplier gateTimeoutNanos, DeviceDefinition definition) {
        this.gateTimeoutNanos = gateTimeoutNanos;
        this.name = definition.name();
        this.definition = definition;
    }

    /**
     * After a change that stored or installed a new definition of this device succeeded (reload,
     * switch, attach, collapse, replace): the error noted before it ({@code before}, read under
     * {@link #op} when the change began) is out of date — a refused configuration the change stored
     * over, an earlier failed build — and WHY must not keep showing it. An error the change noted
     * itself (a new string: an old target that did not close cleanly, a tunable not re-applied) stays.
     */
    void clearErrorNotedBefore(String before) {
        if (before != null && lastError == before) { // identity: the same note, not an equal new one
            lastError = null;
        }
    }

    DeviceState state() {
        if (target == null) {
            return DeviceState.WAITING_FOR_TARGET;
        }
        return gate.isOpen() ? DeviceState.ACTIVE : DeviceState.SUSPENDED;
    }

    boolean ready() {
        return target != null && !removed && !creating;
    }

    private long timeout() {
        return gateTimeoutNanos.getAsLong();
    }

    // ---- the gated I/O path: enter, call the current target, exit ----

    void read(long offset, ByteBuffer dst) throws IOException {
        gate.enter(name, offset, timeout());
        try {
            int n = dst.remaining();
            target.read(offset, dst);
            reads.increment();
            readBytes.add(n);
        } catch (IOException e) {
            errors.increment();
            throw e;
        } finally {
            gate.exit();
        }
    }

    void write(long offset, ByteBuffer src, int flags) throws IOException {
        gate.enter(name, offset, timeout());
        try {
            int n = src.remaining();
            try {
                target.write(offset, src, flags);
            } finally {
                track(offset, n);
            }
            writes.increment();
            writtenBytes.add(n);
        } catch (IOException e) {
            errors.increment();
            throw e;
        } finally {
            gate.exit();
        }
    }

    void flush() throws IOException {
        gate.enter(name, -1, timeout());
        try {
            target.flush();
            flushes.increment();
        } catch (IOException e) {
            errors.increment();
            throw e;
        } finally {
            gate.exit();
        }
    }

    void discard(long offset, long length) throws IOException {
        gate.enter(name, offset, timeout());
        try {
            try {
                target.discard(offset, length);
            } finally {
                track(offset, length);
            }
            discards.increment();
        } catch (IOException e) {
            errors.increment();
            throw e;
        } finally {
            gate.exit();
        }
    }

    void writeZeroes(long offset, long length, int flags) throws IOException {
        gate.enter(name, offset, timeout());
        try {
            try {
                target.writeZeroes(offset, length, flags);
            } finally {
                track(offset, length);
            }
            zeroes.increment();
        } catch (IOException e) {
            errors.increment();
            throw e;
        } finally {
            gate.exit();
        }
    }

    /** After a write-like call (also a failed one: it may have changed part of the range). */
    private void track(long offset, long length) {
        WriteTracker w = tracker;
        if (w != null) {
            w.mark(offset, length);
        }
    }

    boolean canFastZero() {
        Target t = target;
        return t != null && t.canFastZero();
    }

    void extents(long offset, long length, BlockDevice.ExtentSink sink) throws IOException {
        gate.enter(name, offset, timeout());
        try {
            target.extents(offset, length, sink);
        } finally {
            gate.exit();
        }
    }

    /** The view a target above gets from {@code TargetContext.lowerDevice}: gated, never closed by it. */
    private final class LowerView implements BlockDevice {
        @Override
        public long size() {
            return size;
        }

        @Override
        public int blockSize() {
            return blockSize;
        }

        @Override
        public void read(long offset, ByteBuffer dst) throws IOException {
            MappedDevice.this.read(offset, dst);
        }

        @Override
        public void write(long offset, ByteBuffer src, int flags) throws IOException {
            MappedDevice.this.write(offset, src, flags);
        }

        @Override
        public void flush() throws IOException {
            MappedDevice.this.flush();
        }

        @Override
        public void discard(long offset, long length) throws IOException {
            MappedDevice.this.discard(offset, length);
        }

        @Override
        public void writeZeroes(long offset, long length, int flags) throws IOException {
            MappedDevice.this.writeZeroes(offset, length, flags);
        }

        @Override
        public boolean canFastZero() {
            return MappedDevice.this.canFastZero();
        }

        @Override
        public void extents(long offset, long length, ExtentSink sink) throws IOException {
            MappedDevice.this.extents(offset, length, sink);
        }

        @Override
        public void close() {
            // lower devices belong to the manager
        }

        @Override
        public String toString() {
            return "device " + name;
        }
    }

    @Override
    public String toString() {
        return "device " + name;
    }
}
