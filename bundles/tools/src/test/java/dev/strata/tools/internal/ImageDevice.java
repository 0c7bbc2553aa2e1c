package dev.strata.tools.internal;

import dev.strata.api.BlockDevice;
import java.nio.ByteBuffer;

/**
 * A device over a byte array, for damaging images fast: no copy on open, no locks (one thread),
 * durable as written. The every-byte tests lay each damaged byte on an overlay of one of these.
 */
final class ImageDevice implements BlockDevice {
    final byte[] image;

    ImageDevice(byte[] image) {
        this.image = image;
    }

    @Override
    public long size() {
        return image.length;
    }

    @Override
    public int blockSize() {
        return 512;
    }

    @Override
    public void read(long offset, ByteBuffer dst) {
        int n = dst.remaining();
        dst.put(image, (int) offset, n);
    }

    @Override
    public void write(long offset, ByteBuffer src, int flags) {
        int n = src.remaining();
        src.get(image, (int) offset, n);
    }

    @Override
    public void flush() {
    }

    @Override
    public void discard(long offset, long length) {
    }

    @Override
    public void writeZeroes(long offset, long length, int flags) {
        java.util.Arrays.fill(image, (int) offset, (int) (offset + length), (byte) 0);
    }

    @Override
    public void close() {
    }

    /** A read-only view of an image with one byte flipped (xor {@code mask}) where it is read: the repair's patches stay apart. */
    static final class Flipped implements BlockDevice {
        private final byte[] image;
        private final long at;
        private final byte mask;

        Flipped(byte[] image, long at, byte mask) {
            this.image = image;
            this.at = at;
            this.mask = mask;
        }

        @Override
        public long size() {
            return image.length;
        }

        @Override
        public int blockSize() {
            return 512;
        }

        @Override
        public void read(long offset, ByteBuffer dst) {
            int start = dst.position();
            int n = dst.remaining();
            dst.put(image, (int) offset, n);
            if (at >= offset && at < offset + n) {
                int i = start + (int) (at - offset);
                dst.put(i, (byte) (dst.get(i) ^ mask));
            }
        }

        @Override
        public void write(long offset, ByteBuffer src, int flags) {
            throw new UnsupportedOperationException("read-only");
        }

        @Override
        public void flush() {
        }

        @Override
        public void discard(long offset, long length) {
        }

        @Override
        public void writeZeroes(long offset, long length, int flags) {
            throw new UnsupportedOperationException("read-only");
        }

        @Override
        public void close() {
        }
    }
}
