import dev.strata.api.BlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;

/** Counts the writes that reach the backing device (all of them writeback: the load never bypasses). */
final class Counting implements BlockDevice {
    final BlockDevice lower;
    final AtomicLong writes = new AtomicLong();
    final AtomicLong bytes = new AtomicLong();

    Counting(BlockDevice lower) { this.lower = lower; }

    public long size() { return lower.size(); }
    public int blockSize() { return lower.blockSize(); }
    public void read(long off, ByteBuffer dst) throws IOException { lower.read(off, dst); }

    public void write(long off, ByteBuffer src, int flags) throws IOException {
        int n = src.remaining();
        lower.write(off, src, flags);
        writes.incrementAndGet();
        bytes.addAndGet(n);
    }

    public void flush() throws IOException { lower.flush(); }
    public void discard(long o, long l) throws IOException { lower.discard(o, l); }
    public void writeZeroes(long o, long l, int f) throws IOException { lower.writeZeroes(o, l, f); }
    public void close() throws IOException { lower.close(); }
}
