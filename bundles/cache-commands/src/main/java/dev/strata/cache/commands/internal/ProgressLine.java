package dev.strata.cache.commands.internal;

import java.io.PrintStream;
import java.util.function.LongSupplier;

import dev.strata.api.CacheTarget.WritebackProgress;

/**
 * The progress line of a writeback: on a terminal, rewritten in place ({@code \r}) on every report
 * of the target and ended with a newline when the writeback ends. On any other output (a file, a
 * pipe: {@code bin/strata -c … > log}) {@code \r} lines would pile up, so a whole line is printed
 * every {@link #LINE_EVERY_NANOS} instead, and none at the end (the command's result line follows
 * with the totals); a writeback shorter than that prints only its result. Remembers the last figures, so a
 * cancelled or failed writeback can say how far it got. Counts add up over several
 * {@code writebackAll} calls (a drain that is retried).
 */
final class ProgressLine implements WritebackProgress {
    private final PrintStream out;
    private final String device;
    private final int blockSize;
    private final LongSupplier nanoTime;
    private final long start;
    private long base; // written back by earlier writebackAll calls
    private long lastCall; // written back by the current call, as last reported
    private long dirty;
    private boolean printed;
    private int width;
    /** Not a terminal: whole lines, every {@link #LINE_EVERY_NANOS}. */
    private final boolean terminal;
    private long lastLine;
    static final long LINE_EVERY_NANOS = 10_000_000_000L;

    ProgressLine(PrintStream out, String device, int blockSize, long dirty, LongSupplier nanoTime) {
        this(out, device, blockSize, dirty, nanoTime, true);
    }

    ProgressLine(PrintStream out, String device, int blockSize, long dirty, LongSupplier nanoTime, boolean terminal) {
        this.out = out;
        this.device = device;
        this.blockSize = blockSize;
        this.nanoTime = nanoTime;
        this.start = nanoTime.getAsLong();
        this.lastLine = start;
        this.dirty = dirty;
        this.terminal = terminal;
    }

    /**
     * Whether a session's output is a terminal: the console's JLine terminal ({@code .terminal}, not
     * a dumb one), else the JVM's own console ({@code bin/strata -c}: not when redirected).
     */
    static boolean isTerminal(org.apache.felix.service.command.CommandSession session) {
        Object t = session == null ? null : session.get(".terminal");
        if (t != null) {
            try {
                Object type = t.getClass().getMethod("getType").invoke(t);
                return type == null || !type.toString().startsWith("dumb");
            } catch (ReflectiveOperationException | RuntimeException e) {
                return true;
            }
        }
        java.io.Console c = System.console();
        if (c == null) {
            return false;
        }
        try {
            // JDK 22+ has a console also when the output is redirected; isTerminal says which
            return (Boolean) java.io.Console.class.getMethod("isTerminal").invoke(c);
        } catch (NoSuchMethodException e) {
            return true; // JDK 17-21: a console only when both ends are a terminal
        } catch (ReflectiveOperationException | RuntimeException e) {
            return false;
        }
    }

    /** Call before each further {@code writebackAll} with this progress. */
    synchronized void nextCall() {
        base += lastCall;
        lastCall = 0;
    }

    @Override
    public synchronized void update(long dirtyBlocks, long writtenBackThisCall) {
        dirty = dirtyBlocks;
        lastCall = Math.max(0, writtenBackThisCall);
        long elapsed = Math.max(1, nanoTime.getAsLong() - start);
        double rate = writtenBack() * (double) blockSize * 1e9 / elapsed;
        String line = Render.progress(device, dirty, writtenBack(), rate, blockSize);
        if (!terminal) {
            long now = nanoTime.getAsLong();
            if (now - lastLine >= LINE_EVERY_NANOS) {
                out.println(line);
                out.flush();
                lastLine = now;
            }
            return;
        }
        // pad over the end of a longer previous line: \r only moves the cursor back
        out.print("\r" + line + " ".repeat(Math.max(0, width - line.length())));
        out.flush();
        width = line.length();
        printed = true;
    }

    /** Ends the line if anything was printed. */
    synchronized void end() {
        if (printed) {
            out.println();
            out.flush();
            printed = false;
        }
    }

    synchronized long writtenBack() {
        return base + lastCall;
    }

    synchronized long dirty() {
        return dirty;
    }

    /**
     * Takes the target's dirty count now, when the writeback stopped. What counts as written back
     * stays what the target reported (every target reports once more when it is cancelled:
     * blocks of batches that completed, written and flushed), so the report's total is that plus
     * the dirty count, as on the progress line. It used to take what the dirty count fell by since
     * the command started when that was more: that counted the background daemon's writeback (and
     * hid writes that came in meanwhile) — a writecache under fio reported "1,024 of 72,039 written
     * back" after a progress line of "71,015 of 71,271 left".
     */
    synchronized void settle(long dirtyNow) {
        base += lastCall;
        lastCall = 0;
        dirty = dirtyNow;
    }

    long elapsedNanos() {
        return nanoTime.getAsLong() - start;
    }
}
