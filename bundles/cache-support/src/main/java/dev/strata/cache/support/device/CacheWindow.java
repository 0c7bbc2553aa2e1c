package dev.strata.cache.support.device;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Map;

import dev.strata.api.BlockDevice;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Requests;
import dev.strata.cache.support.units.Iec;

/**
 * The first {@code cache_size} bytes of a cache device, as the device a cache formats and uses
 * ({@code cache:resize}): a cache fits its layout to the size it is given, so a window smaller than
 * the device shrinks the cache in place, and one as large as a grown device grows it. Requests are
 * checked against the window and passed on unchanged (the window starts at offset 0).
 */
public final class CacheWindow implements BlockDevice {
    /** The argument every resizable cache takes: the bytes of its cache device it uses. */
    public static final String KEY = "cache_size";

    private final BlockDevice cache;
    private final long size;
    private final String given;

    private CacheWindow(BlockDevice cache, long size, String given) {
        this.cache = cache;
        this.size = size;
        this.given = given;
    }

    /**
     * What a cache laid out over {@code d} has, for a message about too little room: {@code "the
     * cache device has 16.0 MiB"}, or for a window {@code "cache_size=4K gives 4.0 KiB (of the cache
     * device's 16.0 MiB)"}, so that the size quoted is the one the user chose.
     */
    public static String has(BlockDevice d) {
        if (d instanceof CacheWindow w) {
            return KEY + "=" + w.given + " gives " + Iec.size(w.size) + " (of the cache device's " + Iec.size(w.cache.size()) + ")";
        }
        return "the cache device has " + Iec.size(d.size());
    }

    /** The advice that goes with {@link #has}: a larger cache device, or a larger {@code cache_size}. */
    public static String larger(BlockDevice d) {
        return d instanceof CacheWindow w ? "give a larger " + KEY + " (at most " + Iec.size(w.cache.size()) + ")"
                : "use a larger cache device";
    }

    /**
     * The cache device limited to {@code cache_size} if {@code arguments} name one (rounded down to
     * the device's block size), else the device itself.
     *
     * @throws InvalidArgumentException {@code cache_size} is not a size, or larger than the device
     */
    public static BlockDevice of(String type, Map<String, String> arguments, BlockDevice cache) {
        String v = arguments.get(KEY);
        if (v == null) {
            return cache;
        }
        long bytes = parse(type, v);
        if (bytes > cache.size()) {
            throw new InvalidArgumentException(type + ": " + KEY + "=" + v + " is larger than the cache device ("
                    + Iec.size(cache.size()) + "); grow the cache device first, or give a smaller " + KEY);
        }
        long rounded = bytes / cache.blockSize() * cache.blockSize();
        return rounded == cache.size() ? cache : new CacheWindow(cache, rounded, v.trim());
    }

    /** {@code cache_size} in bytes, checked to be a positive size (no device needed). */
    public static long parse(String type, String v) {
        long bytes;
        try {
            bytes = dev.strata.api.TargetArguments.parseSize(KEY, v);
        } catch (InvalidArgumentException e) {
            throw new InvalidArgumentException(type + ": " + KEY + "=" + v + " is not a size; use e.g. 512M or 2G");
        }
        if (bytes < BlockDevice.SECTOR) {
            throw new InvalidArgumentException(type + ": " + KEY + "=" + v + " is too small; use e.g. 512M or 2G");
        }
        return bytes;
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public int blockSize() {
        return cache.blockSize();
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        Requests.check(size, offset, dst.remaining());
        cache.read(offset, dst);
    }

    @Override
    public void write(long offset, ByteBuffer src, int flags) throws IOException {
        Requests.check(size, offset, src.remaining());
        cache.write(offset, src, flags);
    }

    @Override
    public void flush() throws IOException {
        cache.flush();
    }

    @Override
    public void discard(long offset, long length) throws IOException {
        Requests.check(size, offset, length);
        cache.discard(offset, length);
    }

    @Override
    public void writeZeroes(long offset, long length, int flags) throws IOException {
        Requests.check(size, offset, length);
        cache.writeZeroes(offset, length, flags);
    }

    @Override
    public boolean canFastZero() {
        return cache.canFastZero();
    }

    /** The cache device is the manager's; the cache closing its window leaves it open. */
    @Override
    public void close() {
    }
}
