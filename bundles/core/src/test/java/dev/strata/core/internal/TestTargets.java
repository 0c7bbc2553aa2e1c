package dev.strata.core.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Requests;
import dev.strata.api.Target;
import dev.strata.api.TargetArguments;
import dev.strata.api.TargetContext;
import dev.strata.api.TargetFactory;

/** Small leaf targets for the manager's tests. */
public final class TestTargets {
    private TestTargets() {
    }

    public static FactoryEntry entry(TargetFactory f, String type) {
        return new FactoryEntry(type, f, "test." + type, "1.0.0", 0, ID.incrementAndGet());
    }

    private static final java.util.concurrent.atomic.AtomicLong ID = new java.util.concurrent.atomic.AtomicLong();

    /**
     * {@code tfile path=… size=…}: a file (created if missing), positional I/O, flush = force.
     * Counts the targets it opened and closed. {@code fail=true} makes create fail (a broken
     * version of the bundle).
     */
    public static final class FileFactory implements TargetFactory {
        final AtomicInteger opened = new AtomicInteger();
        final AtomicInteger closed = new AtomicInteger();

        @Override
        public String usage() {
            return "tfile path=FILE size=SIZE";
        }

        @Override
        public List<String> lowerDevices(Map<String, String> arguments) {
            TargetArguments.of("tfile", arguments, Set.of("path", "size", "fail"));
            return List.of();
        }

        @Override
        public Target create(TargetContext context) throws IOException {
            TargetArguments a = TargetArguments.of("tfile", context.arguments(), Set.of("path", "size", "fail"));
            Path path = Path.of(a.string("path"));
            long size = a.size("size", 512, Long.MAX_VALUE);
            if (size % 512 != 0) {
                throw new InvalidArgumentException("tfile: size is not a multiple of 512");
            }
            if (a.bool("fail", false)) {
                throw new IOException("tfile: cannot open " + path + " (test failure)");
            }
            FileChannel ch = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE);
            opened.incrementAndGet();
            return new FileTarget(ch, size, closed);
        }
    }

    static final class FileTarget implements Target {
        private final FileChannel ch;
        private final long size;
        private final AtomicInteger closedCounter;
        volatile boolean closed;

        FileTarget(FileChannel ch, long size, AtomicInteger closedCounter) {
            this.ch = ch;
            this.size = size;
            this.closedCounter = closedCounter;
        }

        @Override
        public String type() {
            return "tfile";
        }

        @Override
        public long size() {
            return size;
        }

        @Override
        public int blockSize() {
            return 4096;
        }

        private void open() throws IOException {
            if (closed) {
                throw new IOException("tfile: I/O on a closed target");
            }
        }

        @Override
        public void read(long offset, ByteBuffer dst) throws IOException {
            Requests.check(size, offset, dst.remaining());
            open();
            long pos = offset;
            while (dst.hasRemaining()) {
                int n = ch.read(dst, pos);
                if (n < 0) {
                    while (dst.hasRemaining()) {
                        dst.put((byte) 0);
                    }
                    break;
                }
                pos += n;
            }
        }

        @Override
        public void write(long offset, ByteBuffer src, int flags) throws IOException {
            Requests.check(size, offset, src.remaining());
            open();
            long pos = offset;
            while (src.hasRemaining()) {
                pos += ch.write(src, pos);
            }
            if ((flags & FUA) != 0) {
                ch.force(false);
            }
        }

        @Override
        public void flush() throws IOException {
            open();
            ch.force(false);
        }

        @Override
        public void discard(long offset, long length) {
            Requests.check(size, offset, length);
        }

        @Override
        public void writeZeroes(long offset, long length, int flags) throws IOException {
            Requests.check(size, offset, length);
            write(offset, ByteBuffer.allocate((int) length), flags);
        }

        @Override
        public Map<String, String> status() {
            Map<String, String> m = new LinkedHashMap<>();
            m.put("file_size", Long.toString(size));
            return m;
        }

        @Override
        public void close() throws IOException {
            closed = true;
            ch.force(false);
            ch.close();
            closedCounter.incrementAndGet();
        }
    }

    /**
     * {@code probe size=…}: memory-backed; while {@link #hold} is armed every read and write
     * counts down {@link #entered} and waits for {@link #release}.
     */
    public static final class ProbeFactory implements TargetFactory {
        volatile CountDownLatch entered = new CountDownLatch(0);
        volatile CountDownLatch release = new CountDownLatch(0);
        final AtomicInteger suspends = new AtomicInteger();
        final AtomicInteger resumes = new AtomicInteger();
        final AtomicInteger closes = new AtomicInteger();
        final AtomicInteger inside = new AtomicInteger();
        volatile int maxInside;

        void hold(int requests) {
            entered = new CountDownLatch(requests);
            release = new CountDownLatch(1);
        }

        @Override
        public String usage() {
            return "probe size=SIZE";
        }

        @Override
        public List<String> lowerDevices(Map<String, String> arguments) {
            TargetArguments.of("probe", arguments, Set.of("size"));
            return List.of();
        }

        @Override
        public Target create(TargetContext context) {
            TargetArguments a = TargetArguments.of("probe", context.arguments(), Set.of("size"));
            long size = a.size("size", 512, 1L << 30);
            return new ProbeTarget(this, new byte[(int) size]);
        }
    }

    public static final class ProbeTarget implements Target {
        private final ProbeFactory f;
        private final byte[] data;

        ProbeTarget(ProbeFactory f, byte[] data) {
            this.f = f;
            this.data = data;
        }

        private void gate() throws IOException {
            int now = f.inside.incrementAndGet();
            synchronized (f) {
                f.maxInside = Math.max(f.maxInside, now);
            }
            f.entered.countDown();
            try {
                if (!f.release.await(60, TimeUnit.SECONDS)) {
                    throw new IOException("probe: never released");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted");
            }
        }

        private void leave() {
            f.inside.decrementAndGet();
        }

        @Override
        public String type() {
            return "probe";
        }

        @Override
        public long size() {
            return data.length;
        }

        @Override
        public int blockSize() {
            return 512;
        }

        @Override
        public void read(long offset, ByteBuffer dst) throws IOException {
            Requests.check(data.length, offset, dst.remaining());
            gate();
            try {
                synchronized (data) {
                    dst.put(data, (int) offset, dst.remaining());
                }
            } finally {
                leave();
            }
        }

        @Override
        public void write(long offset, ByteBuffer src, int flags) throws IOException {
            Requests.check(data.length, offset, src.remaining());
            gate();
            try {
                synchronized (data) {
                    src.get(data, (int) offset, src.remaining());
                }
            } finally {
                leave();
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void discard(long offset, long length) {
            Requests.check(data.length, offset, length);
        }

        @Override
        public void writeZeroes(long offset, long length, int flags) throws IOException {
            Requests.check(data.length, offset, length);
            if ((flags & FAST_ZERO) != 0) {
                throw new dev.strata.api.FastZeroUnsupportedException("probe");
            }
            synchronized (data) {
                java.util.Arrays.fill(data, (int) offset, (int) (offset + length), (byte) 0);
            }
        }

        @Override
        public Map<String, String> status() {
            Map<String, String> m = new LinkedHashMap<>();
            m.put("state", "probing");
            m.put("probe_bytes", Integer.toString(data.length));
            return m;
        }

        @Override
        public void suspend() {
            f.suspends.incrementAndGet();
        }

        @Override
        public void resume() {
            f.resumes.incrementAndGet();
        }

        @Override
        public void close() {
            f.closes.incrementAndGet();
        }
    }
}
