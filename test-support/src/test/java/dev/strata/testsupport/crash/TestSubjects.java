package dev.strata.testsupport.crash;

import dev.strata.api.BlockDevice;
import dev.strata.testsupport.target.ForwardingBlockDevice;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;

/** Small targets for testing the harness itself: a correct pass-through and broken ones. */
final class TestSubjects {
    private TestSubjects() {
    }

    /** Passes every request to the device below, optionally breaking one rule. */
    static class PassThrough extends ForwardingBlockDevice {
        PassThrough(BlockDevice lower) {
            super(lower);
        }

        /** A clean close makes everything durable, as {@code Target.close()} must. */
        @Override
        public void close() throws IOException {
            lower.flush();
        }
    }

    /** Acknowledges FLUSH without flushing. */
    static final class LyingFlush extends PassThrough {
        LyingFlush(BlockDevice lower) {
            super(lower);
        }

        @Override
        public void flush() {
        }
    }

    /** Drops the FUA flag (and does not flush after). */
    static final class DroppedFua extends PassThrough {
        DroppedFua(BlockDevice lower) {
            super(lower);
        }

        @Override
        public void write(long offset, ByteBuffer src, int flags) throws IOException {
            lower.write(offset, src, flags & ~FUA);
        }

        @Override
        public void writeZeroes(long offset, long length, int flags) throws IOException {
            lower.writeZeroes(offset, length, flags & ~FUA);
        }
    }

    /** Makes every write durable before acknowledging it: a trivially correct "log". */
    static final class WriteThrough extends PassThrough {
        WriteThrough(BlockDevice lower) {
            super(lower);
        }

        @Override
        public void write(long offset, ByteBuffer src, int flags) throws IOException {
            lower.write(offset, src, flags | FUA);
        }

        @Override
        public void writeZeroes(long offset, long length, int flags) throws IOException {
            lower.writeZeroes(offset, length, flags | FUA);
        }

        @Override
        public void discard(long offset, long length) {
            // advisory: ignoring it is legal
        }
    }

    interface Wrapper {
        BlockDevice wrap(BlockDevice lower);
    }

    /** A subject that builds {@code wrapper} over one 256 KiB crashable device. */
    static CrashTestSubject over(String name, Wrapper wrapper, boolean logStructured) {
        return new CrashTestSubject() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public List<DeviceSpec> devices() {
                return List.of(new DeviceSpec("disk", 256 * 1024, 512));
            }

            @Override
            public BlockDevice create(List<BlockDevice> devices) {
                return wrapper.wrap(devices.get(0));
            }

            @Override
            public BlockDevice reopen(List<BlockDevice> devices) {
                return wrapper.wrap(devices.get(0));
            }

            @Override
            public boolean logStructured() {
                return logStructured;
            }
        };
    }
}
