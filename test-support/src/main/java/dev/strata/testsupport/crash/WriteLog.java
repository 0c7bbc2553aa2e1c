package dev.strata.testsupport.crash;

import java.util.ArrayList;
import java.util.List;

/**
 * An in-memory log-writes recording shared by the devices of one target (so a cache's writes to
 * its cache device and its backing device are ordered against each other). Thread-safe.
 */
public final class WriteLog {
    private final List<LogEntry> entries = new ArrayList<>();

    /** The sequence number the next entry will get (= entries so far). */
    public synchronized long position() {
        return entries.size();
    }

    /** Appends an entry built for the next sequence number; returns it. */
    synchronized LogEntry append(int device, LogEntry.Kind kind, boolean fua, long offset, long length, long covers, byte[] data) {
        LogEntry e = new LogEntry(entries.size(), device, kind, fua, offset, length, covers, data);
        entries.add(e);
        return e;
    }

    /** A snapshot of the entries so far. */
    public synchronized List<LogEntry> entries() {
        return List.copyOf(entries);
    }
}
