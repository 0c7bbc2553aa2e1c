package dev.strata.nbd.internal.exec;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceIOException;
import dev.strata.api.FastZeroUnsupportedException;
import dev.strata.api.InvalidRequestException;
import dev.strata.nbd.internal.protocol.Nbd;
import dev.strata.nbd.internal.protocol.Request;
import java.io.IOException;
import java.nio.ByteBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns transmission requests into {@link BlockDevice} calls and their outcomes into
 * {@link Replies}. One instance per connection, shared by its workers (it holds no per-request
 * state).
 *
 * <h2>Validation</h2>
 * {@link #check} looks only at the header and runs before anything is allocated or read: unknown
 * commands or flags, lengths over {@link Nbd#MAX_BLOCK} for READ/WRITE, ranges past the end
 * (EINVAL, or ENOSPC for writes), writes to a read-only export (EPERM), BLOCK_STATUS without a
 * selected context (EINVAL). A WRITE that fails the check has its payload skipped by the caller.
 *
 * <h2>Sub-sector requests</h2>
 * The device takes only 512-byte-aligned requests; we advertise a minimum block size of 512, but
 * a client that did not ask for block sizes may send less. Unaligned reads read the covering
 * sectors; unaligned writes and zeroing read-modify-write the partial edge sectors under one
 * lock per export (so two of them never interleave). Unaligned trims shrink to whole sectors.
 */
public final class RequestExecutor {
    private static final Logger LOG = LoggerFactory.getLogger(RequestExecutor.class);
    private static final int SECTOR = BlockDevice.SECTOR;
    private static final int MAX_EXTENTS = 4096;

    private final BlockDevice device;
    private final long size;
    private final boolean readOnly;
    private final boolean structured;
    private final boolean baseAllocation;
    private final BufferPool pool;
    private final IoCounters counters;
    private final Object rmwLock;

    public RequestExecutor(BlockDevice device, boolean readOnly, boolean structured, boolean baseAllocation,
            BufferPool pool, IoCounters counters, Object rmwLock) {
        this.device = device;
        this.size = device.size();
        this.readOnly = readOnly;
        this.structured = structured;
        this.baseAllocation = baseAllocation;
        this.pool = pool;
        this.counters = counters;
        this.rmwLock = rmwLock;
    }

    /** Whether the request carries a payload that follows the header on the wire. */
    public static boolean hasPayload(Request r) {
        return r.type == Nbd.CMD_WRITE;
    }

    /** Checks the header alone; 0 if the request may run, else the errno to reply with. */
    public int check(Request r) {
        int allowed;
        switch (r.type) {
            case Nbd.CMD_READ:
                allowed = Nbd.CMD_FLAG_FUA | (structured ? Nbd.CMD_FLAG_DF : 0);
                if ((r.flags & ~allowed) != 0 || r.length > Nbd.MAX_BLOCK) {
                    return Nbd.EINVAL;
                }
                return inside(r) ? 0 : Nbd.EINVAL;
            case Nbd.CMD_WRITE:
                if ((r.flags & ~Nbd.CMD_FLAG_FUA) != 0 || r.length > Nbd.MAX_BLOCK) {
                    return Nbd.EINVAL;
                }
                if (readOnly) {
                    return Nbd.EPERM;
                }
                return inside(r) ? 0 : Nbd.ENOSPC;
            case Nbd.CMD_DISC:
                return 0;
            case Nbd.CMD_FLUSH:
                return (r.flags & ~Nbd.CMD_FLAG_FUA) != 0 ? Nbd.EINVAL : 0;
            case Nbd.CMD_TRIM:
                if ((r.flags & ~Nbd.CMD_FLAG_FUA) != 0) {
                    return Nbd.EINVAL;
                }
                if (readOnly) {
                    return Nbd.EPERM;
                }
                return inside(r) ? 0 : Nbd.EINVAL;
            case Nbd.CMD_CACHE:
                if ((r.flags & ~Nbd.CMD_FLAG_FUA) != 0) {
                    return Nbd.EINVAL;
                }
                return inside(r) ? 0 : Nbd.EINVAL;
            case Nbd.CMD_WRITE_ZEROES:
                if ((r.flags & ~(Nbd.CMD_FLAG_FUA | Nbd.CMD_FLAG_NO_HOLE | Nbd.CMD_FLAG_FAST_ZERO)) != 0) {
                    return Nbd.EINVAL;
                }
                if (readOnly) {
                    return Nbd.EPERM;
                }
                return inside(r) ? 0 : Nbd.ENOSPC;
            case Nbd.CMD_BLOCK_STATUS:
                if ((r.flags & ~(Nbd.CMD_FLAG_FUA | Nbd.CMD_FLAG_REQ_ONE)) != 0 || !baseAllocation || r.length == 0) {
                    return Nbd.EINVAL;
                }
                return inside(r) ? 0 : Nbd.EINVAL;
            default:
                return Nbd.EINVAL;
        }
    }

    /** A message for a failed {@link #check}; only called on the error path. */
    public String checkMessage(Request r, int errno) {
        String what = r.toString();
        switch (errno) {
            case Nbd.EPERM:
                return what + ": the export is read-only";
            case Nbd.ENOSPC:
                return what + ": past the end of the export (size " + size + ")";
            default:
                if (r.type > Nbd.CMD_BLOCK_STATUS) {
                    return what + ": unknown command";
                }
                if (r.type == Nbd.CMD_BLOCK_STATUS && !baseAllocation) {
                    return what + ": no metadata context was selected";
                }
                if ((r.type == Nbd.CMD_READ || r.type == Nbd.CMD_WRITE) && r.length > Nbd.MAX_BLOCK) {
                    return what + ": longer than the maximum block size " + Nbd.MAX_BLOCK;
                }
                if (!inside(r)) {
                    return what + ": past the end of the export (size " + size + ")";
                }
                return what + ": invalid flags or length";
        }
    }

    private boolean inside(Request r) {
        return r.offset >= 0 && r.offset <= size && r.length <= size - r.offset;
    }

    /**
     * Runs a request that passed {@link #check}. {@code payload} holds a WRITE's data (position
     * to limit), otherwise null. I/O errors become error replies; only a failure to send a reply
     * is thrown.
     */
    public void execute(Request r, ByteBuffer payload, Replies out) throws IOException {
        counters.requests.increment();
        long started = System.nanoTime();
        int errno;
        String message;
        try {
            switch (r.type) {
                case Nbd.CMD_READ:
                    read(r, out);
                    counters.latency.record(RequestLatency.READ, System.nanoTime() - started);
                    return;
                case Nbd.CMD_WRITE:
                    write(r.offset, payload, (r.flags & Nbd.CMD_FLAG_FUA) != 0);
                    counters.bytesWritten.add(r.length);
                    counters.latency.record(RequestLatency.WRITE, System.nanoTime() - started);
                    break;
                case Nbd.CMD_FLUSH:
                    device.flush();
                    counters.latency.record(RequestLatency.FLUSH, System.nanoTime() - started);
                    break;
                case Nbd.CMD_TRIM:
                    trim(r);
                    break;
                case Nbd.CMD_CACHE:
                    break;
                case Nbd.CMD_WRITE_ZEROES:
                    writeZeroes(r);
                    counters.bytesWritten.add(r.length);
                    counters.latency.record(RequestLatency.WRITE, System.nanoTime() - started);
                    break;
                case Nbd.CMD_BLOCK_STATUS:
                    blockStatus(r, out);
                    return;
                default:
                    out.error(r, Nbd.EINVAL, r + ": unknown command");
                    return;
            }
            out.ok(r);
            return;
        } catch (FastZeroUnsupportedException e) {
            errno = Nbd.ENOTSUP;
            message = e.getMessage();
        } catch (InvalidRequestException e) {
            errno = Nbd.EINVAL;
            message = e.getMessage();
        } catch (DeviceIOException e) {
            errno = errnoOf(e);
            message = e.getMessage();
        } catch (IOException | RuntimeException e) {
            if (!(e instanceof IOException)) {
                LOG.warn("{} failed unexpectedly", r, e);
            }
            errno = errnoOf(e);
            message = r + ": " + e;
        }
        counters.errors.increment();
        out.error(r, errno, message);
    }

    private static int errnoOf(Exception e) {
        String m = e.getMessage();
        return m != null && m.contains("No space left") ? Nbd.ENOSPC : Nbd.EIO;
    }

    private void read(Request r, Replies out) throws IOException {
        int len = (int) r.length;
        if (len == 0) {
            out.ok(r);
            return;
        }
        long start = r.offset & -SECTOR;
        long end = alignUp(r.offset + len);
        ByteBuffer buf = pool.acquire((int) (end - start));
        boolean handedOver = false;
        try {
            device.read(start, buf);
            buf.position((int) (r.offset - start)).limit((int) (r.offset - start) + len);
            counters.bytesRead.add(len);
            handedOver = true;
            out.data(r, buf);
        } finally {
            if (!handedOver) {
                pool.release(buf);
            }
        }
    }

    private void write(long offset, ByteBuffer src, boolean fua) throws IOException {
        int len = src.remaining();
        if (len == 0) {
            return;
        }
        int flags = fua ? BlockDevice.FUA : 0;
        if (((offset | len) & (SECTOR - 1)) == 0) {
            device.write(offset, src, flags);
            return;
        }
        long start = offset & -SECTOR;
        long end = alignUp(offset + len);
        ByteBuffer buf = pool.acquire((int) (end - start));
        try {
            synchronized (rmwLock) {
                readEdges(buf, start, end, offset, offset + len);
                buf.position((int) (offset - start));
                buf.put(src);
                buf.clear().limit((int) (end - start));
                device.write(start, buf, flags);
            }
        } finally {
            pool.release(buf);
        }
    }

    /** Fills the first and last sector of {@code buf} (covering [start,end)) where [from,to) only partly covers them. */
    private void readEdges(ByteBuffer buf, long start, long end, long from, long to) throws IOException {
        if (from != start) {
            buf.clear().limit(SECTOR);
            device.read(start, buf);
        }
        if (to != end) {
            buf.clear().position((int) (end - start - SECTOR)).limit((int) (end - start));
            device.read(end - SECTOR, buf);
        }
        buf.clear().limit((int) (end - start));
    }

    private void trim(Request r) throws IOException {
        long start = alignUp(r.offset);
        long end = (r.offset + r.length) & -SECTOR;
        if (end > start) {
            device.discard(start, end - start);
        }
        if ((r.flags & Nbd.CMD_FLAG_FUA) != 0) {
            device.flush();
        }
    }

    private void writeZeroes(Request r) throws IOException {
        boolean fua = (r.flags & Nbd.CMD_FLAG_FUA) != 0;
        if ((r.flags & Nbd.CMD_FLAG_FAST_ZERO) != 0 && !device.canFastZero()) {
            throw new FastZeroUnsupportedException(r.toString());
        }
        int flags = (fua ? BlockDevice.FUA : 0) | ((r.flags & Nbd.CMD_FLAG_NO_HOLE) != 0 ? BlockDevice.NO_HOLE : 0)
                | ((r.flags & Nbd.CMD_FLAG_FAST_ZERO) != 0 ? BlockDevice.FAST_ZERO : 0);
        long from = r.offset;
        long to = r.offset + r.length;
        if (r.length == 0) {
            return;
        }
        long innerStart = alignUp(from);
        long innerEnd = to & -SECTOR;
        if (innerEnd <= innerStart) {
            zeroBytes(from, to, fua);
            return;
        }
        device.writeZeroes(innerStart, innerEnd - innerStart, flags);
        if (from < innerStart) {
            zeroBytes(from, innerStart, fua);
        }
        if (to > innerEnd) {
            zeroBytes(innerEnd, to, fua);
        }
    }

    /** Zeroes a short sub-sector range by read-modify-write. */
    private void zeroBytes(long from, long to, boolean fua) throws IOException {
        ByteBuffer zero = pool.acquire((int) (to - from));
        try {
            zeroFill(zero);
            write(from, zero, fua);
        } finally {
            pool.release(zero);
        }
    }

    private static void zeroFill(ByteBuffer b) {
        while (b.remaining() >= 8) {
            b.putLong(0);
        }
        while (b.hasRemaining()) {
            b.put((byte) 0);
        }
        b.flip();
    }

    private void blockStatus(Request r, Replies out) throws IOException {
        long from = r.offset;
        long to = r.offset + r.length;
        long start = from & -SECTOR;
        long end = alignUp(to);
        boolean one = (r.flags & Nbd.CMD_FLAG_REQ_ONE) != 0;
        int max = one ? 1 : MAX_EXTENTS;
        int[] lengths = new int[Math.min(max, 64)];
        int[] flags = new int[lengths.length];
        int[] n = {0};
        int[][] arrays = {lengths, flags};
        device.extents(start, end - start, (off, len, f) -> {
            long s = Math.max(off, from);
            long e = Math.min(off + len, to);
            if (e <= s || n[0] >= max) {
                return;
            }
            int nf = ((f & BlockDevice.ExtentSink.HOLE) != 0 ? Nbd.STATE_HOLE : 0)
                    | ((f & BlockDevice.ExtentSink.ZERO) != 0 ? Nbd.STATE_ZERO : 0);
            int i = n[0];
            if (i > 0 && arrays[1][i - 1] == nf && (long) arrays[0][i - 1] + (e - s) <= 0xffffffffL) {
                arrays[0][i - 1] += (int) (e - s);
                return;
            }
            if (i == arrays[0].length) {
                arrays[0] = java.util.Arrays.copyOf(arrays[0], i * 2);
                arrays[1] = java.util.Arrays.copyOf(arrays[1], i * 2);
            }
            arrays[0][i] = (int) (e - s);
            arrays[1][i] = nf;
            n[0] = i + 1;
        });
        if (n[0] == 0) {
            // a device that reported nothing: say "allocated data" for the whole range
            arrays[0][0] = (int) r.length;
            arrays[1][0] = 0;
            n[0] = 1;
        }
        out.extents(r, dev.strata.nbd.internal.session.ServerHandshake.BASE_ALLOCATION_ID, arrays[0], arrays[1], n[0]);
    }

    private static long alignUp(long v) {
        return (v + SECTOR - 1) & -SECTOR;
    }
}
