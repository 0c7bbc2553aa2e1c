package dev.strata.testsupport.crash;

import dev.strata.api.BlockDevice;

import java.io.IOException;
import java.nio.ByteBuffer;

/** Writing and reading {@link SectorPattern}s through a device. */
final class Patterns {
    private static final int CHUNK_SECTORS = 2048; // 1 MiB per read

    private Patterns() {
    }

    static long[] tokens(long writeId, int firstSector, int count) {
        long[] t = new long[count];
        for (int i = 0; i < count; i++) {
            t[i] = SectorPattern.token(writeId, firstSector + i);
        }
        return t;
    }

    static ByteBuffer buffer(long[] tokens) {
        ByteBuffer b = ByteBuffer.allocate(tokens.length * BlockDevice.SECTOR);
        for (long t : tokens) {
            SectorPattern.fill(b, t);
        }
        return b.flip();
    }

    /** Reads {@code sectors} sectors from {@code firstSector} and decodes them. */
    static long[] read(BlockDevice device, int firstSector, int sectors) throws IOException {
        long[] out = new long[sectors];
        ByteBuffer b = ByteBuffer.allocate(Math.min(sectors, CHUNK_SECTORS) * BlockDevice.SECTOR);
        for (int done = 0; done < sectors; ) {
            int n = Math.min(sectors - done, CHUNK_SECTORS);
            b.clear().limit(n * BlockDevice.SECTOR);
            device.read((long) (firstSector + done) * BlockDevice.SECTOR, b);
            if (b.hasRemaining()) {
                throw new AssertionError("read did not fill the buffer: " + b.remaining() + " bytes left");
            }
            b.flip();
            for (int i = 0; i < n; i++) {
                out[done + i] = SectorPattern.decode(b);
            }
            done += n;
        }
        return out;
    }
}
