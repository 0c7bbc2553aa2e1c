package dev.strata.core.internal.command;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

/** dev:create's progress line: silent for a short build, then rewritten in place, at most 4 a second, ended once. */
class BuildProgressLineTest {
    final AtomicLong now = new AtomicLong(5_000_000_000L);
    final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    final BuildProgressLine line = new BuildProgressLine(new PrintStream(bytes, true, StandardCharsets.UTF_8), "wc",
            now::get);

    private String out() {
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void aShortBuildPrintsNothing() {
        line.update("formatting ssd", 1 << 20, 4 << 20);
        now.addAndGet(999_000_000L);
        line.update("formatting ssd", 4 << 20, 4 << 20);
        line.end();
        assertEquals("", out());
    }

    @Test
    void aLongBuildShowsOneLineRewrittenAndEndsIt() {
        now.addAndGet(1_000_000_000L);
        line.update("formatting ssd", 50L << 30, 200L << 30);
        now.addAndGet(100_000_000L);
        line.update("formatting ssd", 51L << 30, 200L << 30); // too soon: skipped
        now.addAndGet(200_000_000L);
        line.update("formatting ssd", 100L << 30, 200L << 30);
        line.end();
        line.end();
        assertEquals("\rwc: formatting ssd: 50.0 GiB of 200.0 GiB (25%)"
                + "\rwc: formatting ssd: 100.0 GiB of 200.0 GiB (50%)" + System.lineSeparator(), out());
    }
}
