package dev.strata.driver.support.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * A caller whose request is closed under it by interrupts on every try (as when another thread
 * interrupts it in a loop) still gets its request done, by the quiet thread, and keeps its
 * interrupt status; before, the request failed after 16 tries ("keeps being closed by interrupts").
 */
class ReopeningChannelTest {
    @TempDir
    Path dir;

    /** Every positional read, write and force on a caller's thread fails as an interrupt would. */
    private final AtomicInteger closedUnderCaller = new AtomicInteger();

    @Test
    void aCallerInterruptedOnEveryTryStillHasItsRequestsDone() throws IOException {
        Path file = dir.resolve("f.img");
        ReopeningChannel.Opener opener = p -> new InterruptedOnCallerThreads(
                FileChannel.open(p, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE));
        ReopeningChannel io = new ReopeningChannel(file, opener.open(file), opener, LoggerFactory.getLogger("test"));
        Thread.currentThread().interrupt();
        try {
            io.writeFully(ByteBuffer.wrap("strata".getBytes()), 4096);
            io.force(4096);
            ByteBuffer back = ByteBuffer.allocate(6);
            io.readFully(back, 4096);
            assertEquals("strata", new String(back.array()));
            assertTrue(Thread.currentThread().isInterrupted(), "the caller's interrupt status is kept");
        } finally {
            Thread.interrupted();
        }
        assertTrue(closedUnderCaller.get() >= 3 * 4, "each request was closed under its caller first");
        assertEquals(0, io.errors());
        io.close();
    }

    /** A channel whose positional I/O throws as if an interrupt closed it, unless on the quiet thread. */
    private final class InterruptedOnCallerThreads extends FileChannel {
        private final FileChannel d;

        InterruptedOnCallerThreads(FileChannel d) {
            this.d = d;
        }

        private void interruptUnlessQuiet() throws IOException {
            if (!Thread.currentThread().getName().equals("strata-file-quiet-io")) {
                closedUnderCaller.incrementAndGet();
                throw new ClosedByInterruptException();
            }
        }

        @Override
        public int read(ByteBuffer dst, long position) throws IOException {
            interruptUnlessQuiet();
            return d.read(dst, position);
        }

        @Override
        public int write(ByteBuffer src, long position) throws IOException {
            interruptUnlessQuiet();
            return d.write(src, position);
        }

        @Override
        public void force(boolean metaData) throws IOException {
            interruptUnlessQuiet();
            d.force(metaData);
        }

        @Override
        public int read(ByteBuffer dst) throws IOException {
            return d.read(dst);
        }

        @Override
        public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
            return d.read(dsts, offset, length);
        }

        @Override
        public int write(ByteBuffer src) throws IOException {
            return d.write(src);
        }

        @Override
        public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
            return d.write(srcs, offset, length);
        }

        @Override
        public long position() throws IOException {
            return d.position();
        }

        @Override
        public FileChannel position(long newPosition) throws IOException {
            d.position(newPosition);
            return this;
        }

        @Override
        public long size() throws IOException {
            return d.size();
        }

        @Override
        public FileChannel truncate(long size) throws IOException {
            d.truncate(size);
            return this;
        }

        @Override
        public long transferTo(long position, long count, WritableByteChannel target) throws IOException {
            return d.transferTo(position, count, target);
        }

        @Override
        public long transferFrom(ReadableByteChannel src, long position, long count) throws IOException {
            return d.transferFrom(src, position, count);
        }

        @Override
        public MappedByteBuffer map(MapMode mode, long position, long size) throws IOException {
            return d.map(mode, position, size);
        }

        @Override
        public FileLock lock(long position, long size, boolean shared) throws IOException {
            return d.lock(position, size, shared);
        }

        @Override
        public FileLock tryLock(long position, long size, boolean shared) throws IOException {
            return d.tryLock(position, size, shared);
        }

        @Override
        protected void implCloseChannel() throws IOException {
            d.close();
        }
    }
}
