package dev.strata.mirror.internal;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceIOException;
import dev.strata.testsupport.target.ForwardingBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;

/** Test wrappers: counting, swappable (to break a leg and mend it), and a hook before each write. */
public final class Devices {
    private Devices() {
    }

    /** Counts writes (of any kind) and flushes; the lower device can be swapped at run time. */
    public static class Counting extends ForwardingBlockDevice {
        public final AtomicInteger writes = new AtomicInteger();
        public final AtomicInteger flushes = new AtomicInteger();
        private volatile BlockDevice target;
        public volatile IoHook beforeWrite;

        public Counting(BlockDevice lower) {
            super(lower);
            this.target = lower;
        }

        /** Sends every later call to {@code d} (e.g. a flakey or error target, and back). */
        public void swap(BlockDevice d) {
            target = d;
        }

        @Override
        public void read(long offset, ByteBuffer dst) throws IOException {
            target.read(offset, dst);
        }

        @Override
        public void write(long offset, ByteBuffer src, int flags) throws IOException {
            writes.incrementAndGet();
            IoHook h = beforeWrite;
            if (h != null) {
                h.run(offset);
            }
            target.write(offset, src, flags);
        }

        @Override
        public void writeZeroes(long offset, long length, int flags) throws IOException {
            writes.incrementAndGet();
            IoHook h = beforeWrite;
            if (h != null) {
                h.run(offset);
            }
            target.writeZeroes(offset, length, flags);
        }

        @Override
        public void discard(long offset, long length) throws IOException {
            writes.incrementAndGet();
            target.discard(offset, length);
        }

        @Override
        public void flush() throws IOException {
            flushes.incrementAndGet();
            target.flush();
        }
    }

    /** A device as a target of another type (a non-mirror device for the commands' tests). */
    public static final class PlainTarget extends ForwardingBlockDevice implements dev.strata.api.Target {
        private final String type;

        public PlainTarget(String type, BlockDevice lower) {
            super(lower);
            this.type = type;
        }

        @Override
        public String type() {
            return type;
        }

        @Override
        public java.util.Map<String, String> status() {
            return java.util.Map.of();
        }
    }

    /** Runs before a write reaches the device. */
    @FunctionalInterface
    public interface IoHook {
        void run(long offset) throws IOException;
    }

    public static DeviceIOException broken(String name, long offset) {
        return new DeviceIOException(name, offset, "broken on purpose");
    }
}
