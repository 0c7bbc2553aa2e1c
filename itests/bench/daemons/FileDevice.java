import dev.strata.api.BlockDevice;
import dev.strata.api.Requests;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** A FileChannel block device (the cache: a file on the local disk; flush = fdatasync). */
final class FileDevice implements BlockDevice {
    final FileChannel ch;
    final long size;

    FileDevice(Path p, long size) throws IOException {
        ch = FileChannel.open(p, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
        ch.truncate(0);
        ch.write(ByteBuffer.allocate(1), size - 1);
        this.size = size;
    }

    public long size() { return size; }
    public int blockSize() { return 4096; }

    public void read(long off, ByteBuffer dst) throws IOException {
        Requests.check(size, off, dst.remaining());
        while (dst.hasRemaining()) {
            int n = ch.read(dst, off);
            if (n < 0) {
                dst.put(new byte[dst.remaining()]);
                return;
            }
            off += n;
        }
    }

    public void write(long off, ByteBuffer src, int flags) throws IOException {
        Requests.check(size, off, src.remaining());
        while (src.hasRemaining()) {
            off += ch.write(src, off);
        }
        if ((flags & FUA) != 0) {
            ch.force(false);
        }
    }

    public void flush() throws IOException { ch.force(false); }
    public void discard(long o, long l) { }
    public void writeZeroes(long o, long l, int f) throws IOException { write(o, ByteBuffer.allocate((int) l), f); }
    public void close() throws IOException { ch.close(); }
}
