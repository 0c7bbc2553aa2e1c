package dev.strata.core.internal.command;

import java.io.PrintStream;
import java.util.Locale;
import java.util.function.LongSupplier;

import dev.strata.api.DeviceManager.BuildProgress;
import dev.strata.core.internal.text.Text;

/**
 * The progress line of a {@code dev:create} whose build takes long (a writecache formatting a
 * large cache device, a file preallocated): {@code NAME: WHAT: DONE of TOTAL (P%)}, rewritten in
 * place ({@code \r}). Nothing for a build that ends within a second (most do: no line flickers
 * past), then at most four updates a second; {@link #end} ends the line if one was printed.
 */
final class BuildProgressLine implements BuildProgress {
    static final long QUIET_NANOS = 1_000_000_000L;
    static final long EVERY_NANOS = 250_000_000L;
    private final PrintStream out;
    private final String device;
    private final LongSupplier nanoTime;
    private final long start;
    private long last;
    private boolean printed;
    private int width;

    BuildProgressLine(PrintStream out, String device, LongSupplier nanoTime) {
        this.out = out;
        this.device = device;
        this.nanoTime = nanoTime;
        this.start = nanoTime.getAsLong();
    }

    @Override
    public synchronized void update(String what, long done, long total) {
        long now = nanoTime.getAsLong();
        if (now - start < QUIET_NANOS || (printed && now - last < EVERY_NANOS)) {
            return;
        }
        last = now;
        int pct = total <= 0 ? 100 : (int) Math.min(100, done * 100 / total);
        String line = String.format(Locale.ROOT, "%s: %s: %s of %s (%d%%)", device, what, Text.size(done),
                Text.size(total), pct);
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
}
