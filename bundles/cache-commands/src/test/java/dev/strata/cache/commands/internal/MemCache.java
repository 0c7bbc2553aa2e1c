package dev.strata.cache.commands.internal;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import dev.strata.api.BlockDevice;
import dev.strata.api.CacheMode;
import dev.strata.api.CacheTarget;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Requests;

/**
 * A second, minimal cache policy, so that the commands are shown to need nothing of writeboost:
 * a write-back cache of 4 KiB blocks held in memory over an {@code origin} device, with its own
 * type name, its own argument name for the authoritative device ({@code origin}, not
 * {@code backing}), its own tunable, and the strict form of the mode contract (a switch to a
 * clean mode while dirty stops new dirty data, then is refused until drained). It supports no
 * {@code writearound}, so a detach must pick {@code writethrough}.
 * <p>
 * Whole-block copies, one lock; the cached copies are not durable across a crash (the commands'
 * tests do not crash it). Written-back blocks become clean once written to the origin.
 */
final class MemCache implements CacheTarget {
    static final int BS = 4096;
    static final Set<CacheMode> MODES = Set.of(CacheMode.WRITEBACK, CacheMode.WRITETHROUGH, CacheMode.PASSTHROUGH);

    private static final class Entry {
        byte[] data;
        boolean dirty;
        long version;
    }

    private final String name;
    private final BlockDevice origin;
    private final long capacity;
    private final Map<Long, Entry> blocks = new LinkedHashMap<>();
    private CacheMode mode = CacheMode.WRITEBACK;
    private boolean draining; // a switch to a clean mode was refused while dirty: no new dirty data
    private long dirty;
    private long version;
    private long readHits;
    private long readMisses;
    private long writeHits;
    private long writeMisses;
    private long writtenBack;
    private int writebackPercent = 10;

    /**
     * Whether an interrupt during a batch's write surfaces as the device's I/O error, as it does
     * from writecache (the commands must still report a cancel), instead of InterruptedException.
     */
    volatile boolean interruptsAsIoErrors;

    MemCache(String name, BlockDevice origin, long capacityBlocks) {
        this.name = name;
        this.origin = origin;
        this.capacity = capacityBlocks;
    }

    @Override
    public String type() {
        return "memcache";
    }

    @Override
    public long size() {
        return origin.size();
    }

    @Override
    public int blockSize() {
        return origin.blockSize();
    }

    @Override
    public synchronized void read(long offset, ByteBuffer dst) throws IOException {
        Requests.check(this, offset, dst.remaining());
        while (dst.hasRemaining()) {
            long b = offset / BS;
            int within = (int) (offset % BS);
            int n = Math.min(BS - within, dst.remaining());
            Entry e = mode == CacheMode.PASSTHROUGH ? null : blocks.get(b);
            if (e != null) {
                readHits++;
                dst.put(e.data, within, n);
            } else {
                readMisses++;
                ByteBuffer part = dst.slice().limit(n);
                origin.read(offset, part);
                dst.position(dst.position() + n);
            }
            offset += n;
        }
    }

    @Override
    public synchronized void write(long offset, ByteBuffer src, int flags) throws IOException {
        Requests.check(this, offset, src.remaining());
        while (src.hasRemaining()) {
            long b = offset / BS;
            int within = (int) (offset % BS);
            int n = Math.min(BS - within, src.remaining());
            Entry e = blocks.get(b);
            byte[] full = e != null ? e.data.clone() : readOrigin(b);
            src.get(full, within, n);
            CacheMode m = draining ? CacheMode.WRITETHROUGH : mode;
            boolean room = e != null || blocks.size() < capacity || evictClean();
            if (e != null) {
                writeHits++;
            } else {
                writeMisses++;
            }
            if (m == CacheMode.WRITEBACK && room && (flags & FUA) == 0) {
                put(b, e, full, true);
            } else {
                origin.write(b * BS, ByteBuffer.wrap(full), flags);
                if (m == CacheMode.WRITEBACK || m == CacheMode.WRITETHROUGH) {
                    if (room) {
                        put(b, e, full, false);
                    }
                } else if (e != null) {
                    remove(b, e);
                }
            }
            offset += n;
        }
    }

    private void put(long b, Entry e, byte[] data, boolean makeDirty) {
        if (e == null) {
            e = new Entry();
            blocks.put(b, e);
        }
        if (e.dirty && !makeDirty) {
            dirty--;
        } else if (!e.dirty && makeDirty) {
            dirty++;
        }
        e.data = data;
        e.dirty = makeDirty;
        e.version = ++version;
    }

    private void remove(long b, Entry e) {
        blocks.remove(b);
        if (e.dirty) {
            dirty--;
        }
    }

    private boolean evictClean() {
        for (Map.Entry<Long, Entry> e : blocks.entrySet()) {
            if (!e.getValue().dirty) {
                blocks.remove(e.getKey());
                return true;
            }
        }
        return false;
    }

    private byte[] readOrigin(long b) throws IOException {
        byte[] a = new byte[BS];
        origin.read(b * BS, ByteBuffer.wrap(a));
        return a;
    }

    @Override
    public void flush() throws IOException {
        origin.flush();
    }

    @Override
    public void discard(long offset, long length) {
        Requests.check(this, offset, length); // advisory: cached copies stay
    }

    @Override
    public void writeZeroes(long offset, long length, int flags) throws IOException {
        Requests.check(this, offset, length);
        write(offset, ByteBuffer.allocate((int) length), flags);
    }

    @Override
    public void close() throws IOException {
        while (true) {
            long b;
            byte[] data;
            synchronized (this) {
                Map.Entry<Long, Entry> d = firstDirty();
                if (d == null) {
                    break;
                }
                b = d.getKey();
                data = d.getValue().data;
                d.getValue().dirty = false;
                dirty--;
            }
            origin.write(b * BS, ByteBuffer.wrap(data), 0);
        }
        origin.flush();
    }

    private Map.Entry<Long, Entry> firstDirty() {
        for (Map.Entry<Long, Entry> e : blocks.entrySet()) {
            if (e.getValue().dirty) {
                return e;
            }
        }
        return null;
    }

    @Override
    public synchronized CacheMode mode() {
        return mode;
    }

    @Override
    public Set<CacheMode> supportedModes() {
        return MODES;
    }

    @Override
    public synchronized void setMode(CacheMode m) {
        if (!MODES.contains(m)) {
            throw new InvalidArgumentException("memcache: no mode " + m.label());
        }
        if (!m.holdsDirtyData() && dirty > 0) {
            draining = true;
            throw new InvalidArgumentException("memcache " + name + ": " + dirty + " dirty blocks; write them back first");
        }
        draining = false;
        mode = m;
    }

    @Override
    public String authoritativeDeviceArgument() {
        return "origin";
    }

    @Override
    public String cacheDeviceArgument() {
        return "cache";
    }

    @Override
    public int cacheBlockSize() {
        return BS;
    }

    @Override
    public long capacityBlocks() {
        return capacity;
    }

    @Override
    public synchronized long cachedBlocks() {
        return blocks.size();
    }

    @Override
    public synchronized long dirtyBlocks() {
        return dirty;
    }

    @Override
    public void writebackAll(WritebackProgress progress) throws IOException, InterruptedException {
        long done = 0;
        while (true) {
            if (Thread.interrupted()) {
                throw new InterruptedException(name + ": writeback cancelled");
            }
            long b;
            byte[] data;
            long v;
            synchronized (this) {
                Map.Entry<Long, Entry> d = firstDirty();
                if (d == null) {
                    break;
                }
                b = d.getKey();
                data = d.getValue().data;
                v = d.getValue().version;
            }
            try {
                origin.write(b * BS, ByteBuffer.wrap(data), 0);
            } catch (InterruptedIOException e) {
                if (interruptsAsIoErrors) {
                    throw e;
                }
                Thread.interrupted();
                throw new InterruptedException(name + ": writeback cancelled");
            }
            long left;
            synchronized (this) {
                Entry e = blocks.get(b);
                if (e != null && e.version == v && e.dirty) { // not overwritten meanwhile
                    e.dirty = false;
                    dirty--;
                    writtenBack++;
                    done++;
                }
                left = dirty;
            }
            progress.update(left, done);
        }
        origin.flush();
        progress.update(dirtyBlocks(), done);
    }

    @Override
    public synchronized void message(String key, String value) {
        switch (key) {
            case "writeback_percent" -> {
                int p;
                try {
                    p = Integer.parseInt(value);
                } catch (NumberFormatException e) {
                    p = -1;
                }
                if (p < 0 || p > 100) {
                    throw new InvalidArgumentException("memcache: writeback_percent=" + value + " is not a percentage; use 0 to 100");
                }
                writebackPercent = p;
            }
            case Actions.INVALIDATE -> {
                if (!Actions.ALL.equals(value) || dirty > 0) {
                    throw new InvalidArgumentException("memcache: invalidate=all only, and only when clean (" + dirty + " dirty)");
                }
                blocks.clear();
            }
            case Actions.WRITEBACK -> {
                // no background writeback: writebackAll is the only way
            }
            default -> throw new InvalidArgumentException("memcache: no tunable '" + key + "'; tunables: writeback_percent");
        }
    }

    @Override
    public synchronized Map<String, String> status() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put(Keys.MODE, mode.label());
        m.put(Keys.BLOCK_SIZE, Integer.toString(BS));
        m.put(Keys.CAPACITY_BLOCKS, Long.toString(capacity));
        m.put(Keys.CACHED_BLOCKS, Integer.toString(blocks.size()));
        m.put(Keys.DIRTY_BLOCKS, Long.toString(dirty));
        m.put(Keys.READ_HITS, Long.toString(readHits));
        m.put(Keys.READ_MISSES, Long.toString(readMisses));
        m.put(Keys.WRITE_HITS, Long.toString(writeHits));
        m.put(Keys.WRITE_MISSES, Long.toString(writeMisses));
        m.put(Keys.WRITTEN_BACK_BLOCKS, Long.toString(writtenBack));
        m.put(Keys.WRITEBACK_ERROR, "");
        m.put("writeback_percent", Integer.toString(writebackPercent));
        m.put("origin_bytes", Long.toString(origin.size()));
        return m;
    }
}
