package dev.strata.mirror.internal.log.zk;

import dev.strata.api.BlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** A leg in a file, shared by the processes of a cluster test (positional I/O, flush = fdatasync). */
final class FileLeg implements BlockDevice {
    private final FileChannel ch;
    private final long size;

    FileLeg(Path file, long size) throws IOException {
        this.ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
        this.size = size;
        if (ch.size() < size) {
            ch.write(ByteBuffer.allocate(1), size - 1);
        }
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public int blockSize() {
        return 4096;
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        while (dst.hasRemaining()) {
            if (ch.read(dst, offset + dst.position()) < 0) {
                throw new IOException("short read");
            }
        }
    }

    @Override
    public void write(long offset, ByteBuffer src, int flags) throws IOException {
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
        ch.force(false);
    }

    @Override
    public void discard(long offset, long length) {
        // advisory
    }

    @Override
    public void writeZeroes(long offset, long length, int flags) throws IOException {
        write(offset, ByteBuffer.allocate(Math.toIntExact(length)), flags);
    }

    @Override
    public void close() throws IOException {
        ch.close();
    }
}
