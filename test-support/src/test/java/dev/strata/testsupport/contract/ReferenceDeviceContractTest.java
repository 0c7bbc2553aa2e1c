package dev.strata.testsupport.contract;

import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.strata.api.BlockDevice;
import dev.strata.api.Requests;
import java.io.IOException;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;
import org.opentest4j.AssertionFailedError;

/**
 * Runs the contract suite on the simplest correct device (a locked byte array), and checks that
 * the suite notices devices that break the contract.
 */
class ReferenceDeviceContractTest extends BlockDeviceContract {

    @Override
    protected BlockDevice newDevice(long size) {
        return new ArrayDevice(size);
    }

    @Test
    void theSuiteNoticesALostWrite() throws IOException {
        ArrayDevice broken = new ArrayDevice(deviceSize()) {
            @Override
            public synchronized void write(long offset, ByteBuffer src, int flags) {
                if (offset == 4096 * 3 + 512 * 5) { // one of readYourWrites' offsets
                    Requests.check(this, offset, src.remaining());
                    src.position(src.limit());
                    return;
                }
                super.write(offset, src, flags);
            }
        };
        device = broken;
        assertThrows(AssertionFailedError.class, this::readYourWritesAtManyOffsetsAndSizes);
    }

    @Test
    void theSuiteNoticesAWriteThatMovesDataBeforeCheckingTheRange() throws IOException {
        device = new ArrayDevice(deviceSize()) {
            @Override
            public synchronized void write(long offset, ByteBuffer src, int flags) {
                if (offset >= 0 && offset < size()) {
                    int n = (int) Math.min(src.remaining(), size() - offset);
                    ByteBuffer part = src.duplicate();
                    part.limit(part.position() + n);
                    super.write(offset, part, flags);
                }
                super.write(offset, src, flags);
            }
        };
        assertThrows(AssertionFailedError.class, this::outOfRangeRequestsAreRejectedAndChangeNothing);
    }

    static class ArrayDevice implements BlockDevice {
        private final byte[] data;

        ArrayDevice(long size) {
            data = new byte[(int) size];
        }

        @Override
        public long size() {
            return data.length;
        }

        @Override
        public int blockSize() {
            return 4096;
        }

        @Override
        public synchronized void read(long offset, ByteBuffer dst) {
            Requests.check(this, offset, dst.remaining());
            dst.put(data, (int) offset, dst.remaining());
        }

        @Override
        public synchronized void write(long offset, ByteBuffer src, int flags) {
            Requests.check(this, offset, src.remaining());
            src.get(data, (int) offset, src.remaining());
        }

        @Override
        public void flush() {
        }

        @Override
        public synchronized void discard(long offset, long length) {
            Requests.check(this, offset, length);
        }

        @Override
        public synchronized void writeZeroes(long offset, long length, int flags) throws IOException {
            Requests.check(this, offset, length);
            if ((flags & FAST_ZERO) != 0) {
                throw new dev.strata.api.FastZeroUnsupportedException("array");
            }
            java.util.Arrays.fill(data, (int) offset, (int) (offset + length), (byte) 0);
        }

        @Override
        public void close() {
        }
    }
}
