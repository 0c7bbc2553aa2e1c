package dev.strata.core.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.strata.api.BlockDevice;
import dev.strata.api.CacheMode;
import dev.strata.api.CacheTarget;
import dev.strata.api.Claim;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Target;
import dev.strata.api.TargetArguments;
import dev.strata.api.TargetContext;
import dev.strata.api.TargetFactory;

/**
 * {@code tcache backing=DEV cache=DEV [threshold=N]}: a pretend cache for the manager's tests.
 * I/O goes to the backing device; {@code dirty=N} sets its dirty count, {@code threshold=N} is
 * a setting (reported in status) that it also takes as an argument at build, {@code label=TEXT}
 * a setting it takes only by message, {@code writeback=all} an action. {@link #writebackAll} blocks
 * until interrupted, so tests can hold a long call. It claims both devices exclusively and
 * adopts a tcache over the same devices.
 */
public final class CacheTestTarget implements CacheTarget {
    static final Set<String> KEYS = Set.of("backing", "cache", "threshold", "format");

    public static final class Factory implements TargetFactory {
        final AtomicInteger closes = new AtomicInteger();
        /** How many targets were closed when the last {@code invalidate=all} came (-1: none came). */
        volatile int closesAtInvalidate = -1;
        final AtomicBoolean closedDuringCall = new AtomicBoolean();
        final AtomicInteger inCall = new AtomicInteger();
        volatile CountDownLatch callEntered = new CountDownLatch(1);
        volatile CountDownLatch statusRelease = new CountDownLatch(0);
        volatile CountDownLatch statusEntered = new CountDownLatch(1);
        volatile CacheTestTarget last;
        /** The {@code threshold} argument each target was built with, in order. */
        final List<String> builtWithThreshold = new java.util.concurrent.CopyOnWriteArrayList<>();
        /** Every {@code key=value} message any target got, in order. */
        final List<String> messages = new java.util.concurrent.CopyOnWriteArrayList<>();
        /** Builds whose arguments it matches are refused, as an open that finds the device unusable (null: none). */
        volatile java.util.function.Predicate<Map<String, String>> refuse;
        /** Run with every message, before it is applied (null: nothing). */
        volatile java.util.function.Consumer<String> onMessage;

        @Override
        public boolean buildsWithTunable(String key) {
            return "threshold".equals(key);
        }

        @Override
        public String usage() {
            return "tcache backing=DEV cache=DEV";
        }

        @Override
        public String backingArgument() {
            return "backing";
        }

        @Override
        public List<String> lowerDevices(Map<String, String> arguments) {
            TargetArguments a = TargetArguments.of("tcache", arguments, KEYS);
            return List.of(a.string("backing"), a.string("cache"));
        }

        @Override
        public Map<String, Claim> claims(Map<String, String> arguments) {
            List<String> l = lowerDevices(arguments);
            Map<String, Claim> m = new LinkedHashMap<>();
            l.forEach(d -> m.put(d, Claim.EXCLUSIVE));
            return m;
        }

        @Override
        public boolean adopts(String oldType, Map<String, String> oldArguments, Map<String, String> newArguments) {
            return "tcache".equals(oldType) && lowerDevices(oldArguments).equals(lowerDevices(newArguments));
        }

        @Override
        public Target create(TargetContext context) {
            TargetArguments a = TargetArguments.of("tcache", context.arguments(), KEYS);
            java.util.function.Predicate<Map<String, String>> r = refuse;
            if (r != null && r.test(context.arguments())) {
                throw new InvalidArgumentException("tcache: the cache device is formatted with threshold=10, not "
                        + a.string("threshold", "10"));
            }
            CacheTestTarget t = new CacheTestTarget(this, context.lowerDevice(a.string("backing")),
                    context.lowerDeviceId(a.string("backing")), a.string("threshold", "10"));
            builtWithThreshold.add(a.string("threshold", "(default)"));
            last = t;
            return t;
        }
    }

    private final Factory f;
    private final BlockDevice backing;
    final String backingId;
    volatile long dirty;
    volatile String threshold;
    volatile String label = "";
    volatile boolean closed;
    final AtomicInteger suspends = new AtomicInteger();
    final AtomicInteger resumes = new AtomicInteger();
    volatile boolean failSuspend;
    volatile boolean failResume;

    CacheTestTarget(Factory f, BlockDevice backing, String backingId, String threshold) {
        this.f = f;
        this.backing = backing;
        this.backingId = backingId;
        this.threshold = threshold;
    }

    @Override
    public String type() {
        return "tcache";
    }

    @Override
    public long size() {
        return backing.size();
    }

    @Override
    public int blockSize() {
        return backing.blockSize();
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        backing.read(offset, dst);
    }

    @Override
    public void write(long offset, ByteBuffer src, int flags) throws IOException {
        backing.write(offset, src, flags);
    }

    @Override
    public void flush() throws IOException {
        backing.flush();
    }

    @Override
    public void discard(long offset, long length) {
    }

    @Override
    public void writeZeroes(long offset, long length, int flags) throws IOException {
        backing.writeZeroes(offset, length, flags);
    }

    @Override
    public Map<String, String> status() {
        f.statusEntered.countDown();
        try {
            f.statusRelease.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (closed) {
            f.closedDuringCall.set(true);
        }
        Map<String, String> m = new LinkedHashMap<>();
        m.put("dirty_blocks", Long.toString(dirty));
        m.put("threshold", threshold);
        m.put("label", label);
        m.put("backing_id", String.valueOf(backingId));
        return m;
    }

    /** {@code label=later…}: accepted with a note, like a mode change that waits for a writeback. */
    @Override
    public String messageWithNote(String key, String value) {
        message(key, value);
        return "label".equals(key) && value.startsWith("later") ? "takes effect later" : null;
    }

    @Override
    public void message(String key, String value) {
        f.messages.add(key + "=" + value);
        java.util.function.Consumer<String> hook = f.onMessage;
        if (hook != null) {
            hook.accept(key + "=" + value);
        }
        switch (key) {
            case "label" -> label = value;
            case "dirty" -> dirty = Long.parseLong(value);
            case "threshold" -> {
                if (!value.matches("\\d+")) {
                    throw new InvalidArgumentException("tcache: threshold=" + value + " is not a number");
                }
                threshold = value;
            }
            case "writeback" -> dirty = 0;
            case "invalidate" -> {
                f.closesAtInvalidate = f.closes.get();
                if (dirty > 0) {
                    throw new InvalidArgumentException("tcache: " + dirty + " blocks are dirty");
                }
            }
            default -> throw new InvalidArgumentException("tcache: no tunable '" + key + "'");
        }
    }

    @Override
    public void suspend() throws IOException {
        suspends.incrementAndGet();
        if (failSuspend) {
            throw new IOException("tcache: the log could not be written");
        }
    }

    @Override
    public void resume() throws IOException {
        resumes.incrementAndGet();
        if (failResume) {
            throw new IOException("tcache: the daemons would not start");
        }
    }

    @Override
    public void close() {
        closed = true;
        if (f.inCall.get() > 0) {
            f.closedDuringCall.set(true);
        }
        f.closes.incrementAndGet();
    }

    @Override
    public CacheMode mode() {
        return CacheMode.WRITEBACK;
    }

    @Override
    public Set<CacheMode> supportedModes() {
        return EnumSet.of(CacheMode.WRITEBACK);
    }

    @Override
    public void setMode(CacheMode mode) {
    }

    @Override
    public String authoritativeDeviceArgument() {
        return "backing";
    }

    @Override
    public String cacheDeviceArgument() {
        return "cache";
    }

    @Override
    public int cacheBlockSize() {
        return 4096;
    }

    @Override
    public long capacityBlocks() {
        return 1000;
    }

    @Override
    public long cachedBlocks() {
        return dirty;
    }

    @Override
    public long dirtyBlocks() {
        return dirty;
    }

    /** Blocks until the thread is interrupted (a long writeback), counting itself as a running call. */
    @Override
    public void writebackAll(WritebackProgress progress) throws InterruptedException {
        f.inCall.incrementAndGet();
        try {
            f.callEntered.countDown();
            if (closed) {
                f.closedDuringCall.set(true);
            }
            new CountDownLatch(1).await();
        } finally {
            if (closed) {
                f.closedDuringCall.set(true);
            }
            f.inCall.decrementAndGet();
        }
    }
}
