package dev.strata.cache.writecache.internal.io;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceIOException;
import dev.strata.testsupport.target.ForwardingBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * A device that records every request ({@code "W 4096+8192"}, {@code "W 0+4096 fua"}, {@code "F"},
 * {@code "R …"}, {@code "Z …"}, {@code "D …"}) into a shared list, and fails the kinds of request
 * switched on in {@link #failing}.
 */
public final class Recorder extends ForwardingBlockDevice {
    public final String name;
    public final List<String> log;
    /** Fail requests whose kind letter (R, W, F, Z, D) is in this string. */
    public volatile String failing = "";
    /** Kinds whose request is cancelled as an interrupted wait in a driver ends: flag set, InterruptedIOException. */
    public volatile String interrupting = "";

    public Recorder(String name, BlockDevice lower, List<String> log) {
        super(lower);
        this.name = name;
        this.log = log;
    }

    public Recorder(String name, BlockDevice lower) {
        this(name, lower, new ArrayList<>());
    }

    private void note(String kind, long offset, long length, String extra) throws IOException {
        synchronized (log) {
            log.add(name + " " + kind + (kind.equals("F") ? "" : " " + offset + "+" + length) + extra);
        }
        if (failing.contains(kind)) {
            throw new DeviceIOException(name, offset, "injected " + kind + " error");
        }
        if (interrupting.contains(kind)) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException(name + ": interrupted");
        }
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws IOException {
        note("R", offset, dst.remaining(), "");
        super.read(offset, dst);
    }

    @Override
    public void write(long offset, ByteBuffer src, int flags) throws IOException {
        note("W", offset, src.remaining(), (flags & FUA) != 0 ? " fua" : "");
        super.write(offset, src, flags);
    }

    @Override
    public void flush() throws IOException {
        note("F", -1, 0, "");
        super.flush();
    }

    @Override
    public void writeZeroes(long offset, long length, int flags) throws IOException {
        note("Z", offset, length, (flags & FUA) != 0 ? " fua" : "");
        super.writeZeroes(offset, length, flags);
    }

    @Override
    public void discard(long offset, long length) throws IOException {
        note("D", offset, length, "");
        super.discard(offset, length);
    }

    public List<String> take() {
        synchronized (log) {
            List<String> l = new ArrayList<>(log);
            log.clear();
            return l;
        }
    }
}
