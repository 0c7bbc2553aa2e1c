package dev.strata.cache.readcache.internal.io;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceIOException;
import dev.strata.testsupport.target.ForwardingBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;

/** A device whose reads or writes can be made to fail, counting the reads that reach it. */
final class Faulty extends ForwardingBlockDevice {
    volatile boolean failReads;
    volatile boolean failWrites;
    final AtomicLong reads = new AtomicLong();

    Faulty(BlockDevice lower) {
        super(lower);
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        reads.incrementAndGet();
        if (failReads) {
            throw new DeviceIOException("faulty", offset, "injected read error");
        }
        super.read(offset, dst);
    }

    @Override
    public void write(long offset, ByteBuffer src, int flags) throws IOException {
        if (failWrites) {
            throw new DeviceIOException("faulty", offset, "injected write error");
        }
        super.write(offset, src, flags);
    }
}
