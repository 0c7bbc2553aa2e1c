package dev.strata.readcache.policies.replay;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.zip.GZIPInputStream;

/**
 * An ARC-format trace (Megiddo and Modha, FAST '03): one request per line,
 * {@code start nblocks ignore reqno}; the request reads the 512-byte blocks
 * {@code start … start+nblocks−1}, each one key. Plain or gzip ({@code .gz}).
 */
final class Trace {
    /** A trace that cannot be read: the message is one line naming the file and the line. */
    static final class BadTraceException extends Exception {
        private static final long serialVersionUID = 1L;

        BadTraceException(String message) {
            super(message);
        }
    }

    private long[] starts;
    private int[] lengths;
    private int requests;
    private long keys;

    private Trace(int initial) {
        starts = new long[initial];
        lengths = new int[initial];
    }

    static Trace read(Path file) throws BadTraceException {
        if (!Files.isRegularFile(file)) {
            throw new BadTraceException(file + ": no such trace file");
        }
        try (InputStream raw = Files.newInputStream(file);
                InputStream in = file.getFileName().toString().endsWith(".gz") ? new GZIPInputStream(raw, 1 << 16) : raw) {
            return parse(new BufferedReader(new InputStreamReader(in, StandardCharsets.US_ASCII), 1 << 16), file.toString());
        } catch (IOException e) {
            throw new BadTraceException(file + ": cannot be read (" + e.getMessage() + "); is it a trace, plain or gzip?");
        }
    }

    static Trace parse(BufferedReader r, String name) throws IOException, BadTraceException {
        Trace t = new Trace(1024);
        String line;
        int n = 0;
        while ((line = r.readLine()) != null) {
            n++;
            String s = line.trim();
            if (s.isEmpty()) {
                continue;
            }
            String[] f = s.split("\\s+");
            long start;
            long len;
            try {
                if (f.length != 4) {
                    throw new NumberFormatException();
                }
                start = Long.parseLong(f[0]);
                len = Long.parseLong(f[1]);
            } catch (NumberFormatException e) {
                throw new BadTraceException(name + " line " + n + ": expected 'start nblocks ignore reqno', got '"
                        + (s.length() > 60 ? s.substring(0, 60) + "…" : s) + "'");
            }
            if (start < 0 || len < 1 || len > Integer.MAX_VALUE || start + len < 0) {
                throw new BadTraceException(name + " line " + n + ": start must be ≥ 0 and nblocks ≥ 1, got '" + s + "'");
            }
            t.add(start, (int) len);
        }
        if (t.requests == 0) {
            throw new BadTraceException(name + ": no requests in the trace");
        }
        return t;
    }

    private void add(long start, int len) {
        if (requests == starts.length) {
            starts = Arrays.copyOf(starts, requests * 2);
            lengths = Arrays.copyOf(lengths, requests * 2);
        }
        starts[requests] = start;
        lengths[requests] = len;
        requests++;
        keys += len;
    }

    int requests() {
        return requests;
    }

    /** Keys accessed (the sum of every request's blocks). */
    long keys() {
        return keys;
    }

    /** Feeds every key of the trace to {@code sim}; returns the hits. */
    long replay(Simulator sim) {
        long hits = 0;
        for (int i = 0; i < requests; i++) {
            long s = starts[i];
            for (int j = 0; j < lengths[i]; j++) {
                if (sim.access(s + j)) {
                    hits++;
                }
            }
        }
        return hits;
    }

    /** Distinct keys of the trace. */
    int distinctKeys() {
        LongIntMap seen = new LongIntMap(1 << 16);
        LongIntMap[] holder = {seen};
        replay(k -> {
            if (holder[0].get(k) == LongIntMap.ABSENT) {
                if (holder[0].size() * 2 + 2 > holder[0].capacity()) {
                    holder[0] = holder[0].grown();
                }
                holder[0].put(k, 0);
            }
            return false;
        });
        return holder[0].size();
    }
}
