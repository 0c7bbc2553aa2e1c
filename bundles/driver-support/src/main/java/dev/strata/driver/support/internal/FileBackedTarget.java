package dev.strata.driver.support.internal;

import dev.strata.api.BlockDevice;
import dev.strata.api.Requests;
import dev.strata.api.Target;
import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What the {@code file} and {@code direct} targets have in common: a regular file of a fixed
 * size behind a {@link ReopeningChannel}, the same counters, the same flush (fdatasync), the same
 * advisory discard and the same status layout. The subclasses differ only in how they move the
 * bytes (page cache, or O_DIRECT with bounce buffers).
 */
public abstract class FileBackedTarget implements Target {
    protected final Path path;
    protected final String name;
    protected final long size;
    protected final int blockSize;
    protected final ReopeningChannel io;
    protected final IoCounters counters = new IoCounters();
    private final ImageClaims.Claim claim;

    /** @param claim this device's claim on the file, released by {@link #close()} */
    protected FileBackedTarget(Path path, long size, ReopeningChannel io, ImageClaims.Claim claim) {
        this.path = path;
        this.name = path.toString();
        this.size = size;
        this.blockSize = size % 4096 == 0 ? 4096 : BlockDevice.SECTOR;
        this.io = io;
        this.claim = claim;
    }

    @Override
    public final long size() {
        return size;
    }

    @Override
    public final int blockSize() {
        return blockSize;
    }

    public final Path path() {
        return path;
    }

    @Override
    public final void flush() throws IOException {
        counters.flushes.increment();
        io.force(-1);
    }

    @Override
    public final void discard(long offset, long length) throws IOException {
        Requests.check(size, offset, length);
        // Advisory, and the JDK cannot punch holes (no fallocate): the data stays.
        counters.discards.increment();
    }

    /**
     * path, size, block_size, {@link #putGeometry}, the counters, {@link #putCounters}, errors,
     * reopens: one layout for both targets, so a user reads them the same way.
     */
    @Override
    public final Map<String, String> status() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("path", name);
        m.put("size", Long.toString(size));
        m.put("block_size", Integer.toString(blockSize));
        putGeometry(m);
        counters.putInto(m);
        putCounters(m);
        m.put("errors", Long.toString(io.errors()));
        m.put("reopens", Long.toString(io.reopens()));
        return m;
    }

    /** A subclass's own layout keys, after {@code block_size}. */
    protected void putGeometry(Map<String, String> status) {
    }

    /** A subclass's own counters, after the common ones. */
    protected void putCounters(Map<String, String> status) {
    }

    @Override
    public final void close() throws IOException {
        try {
            io.close();
        } finally {
            claim.release(); // the channel is closed even when its last flush failed
        }
    }
}
