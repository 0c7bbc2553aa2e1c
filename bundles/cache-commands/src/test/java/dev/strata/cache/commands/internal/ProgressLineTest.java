package dev.strata.cache.commands.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.felix.gogo.runtime.CommandProcessorImpl;
import org.apache.felix.gogo.runtime.threadio.ThreadIOImpl;
import org.apache.felix.service.command.CommandSession;
import org.junit.jupiter.api.Test;

/** Progress on a terminal ({@code \r}, rewritten) and on anything else (whole lines, now and then). */
class ProgressLineTest {
    static final long S = 1_000_000_000L;

    @Test
    void notATerminalGetsAWholeLineEveryTenSecondsAndNoneAtTheEnd() {
        AtomicLong clock = new AtomicLong();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        ProgressLine p = new ProgressLine(new PrintStream(bytes, true), "pwc", 4096, 1000, clock::get, false);
        for (int i = 1; i <= 25; i++) { // one report a second, as the caches report
            clock.addAndGet(S);
            p.update(1000 - 40L * i, 40L * i);
        }
        p.end();
        String text = bytes.toString(StandardCharsets.UTF_8);
        assertFalse(text.contains("\r"), text);
        List<String> lines = text.lines().toList();
        assertEquals(2, lines.size(), text); // at 10 s and 20 s
        assertTrue(lines.get(0).startsWith("writeback pwc: 600 of 1,000 blocks left (40%)"), text);
        assertTrue(lines.get(1).startsWith("writeback pwc: 200 of 1,000 blocks left (80%)"), text);
        assertEquals(1000, p.writtenBack());
    }

    @Test
    void aTerminalGetsTheLineRewrittenInPlace() {
        AtomicLong clock = new AtomicLong();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        ProgressLine p = new ProgressLine(new PrintStream(bytes, true), "pwc", 4096, 1000, clock::get, true);
        for (int i = 1; i <= 3; i++) {
            clock.addAndGet(S);
            p.update(1000 - 100L * i, 100L * i);
        }
        p.end();
        String text = bytes.toString(StandardCharsets.UTF_8);
        assertEquals(3, text.chars().filter(c -> c == '\r').count(), text);
        assertTrue(text.endsWith("\n"), text);
    }

    @Test
    void theSessionSaysWhetherItsOutputIsATerminal() {
        ThreadIOImpl tio = new ThreadIOImpl();
        tio.start();
        CommandProcessorImpl processor = new CommandProcessorImpl(tio);
        try (CommandSession s = processor.createSession(System.in, System.out, System.err)) {
            // surefire's output is no terminal and there is no console's .terminal: bin/strata -c > file
            assertFalse(ProgressLine.isTerminal(s));
            s.put(".terminal", new FakeTerminal("dumb"));
            assertFalse(ProgressLine.isTerminal(s), "JLine's dumb terminal: the output is redirected");
            s.put(".terminal", FakeTerminal.XTERM);
            assertTrue(ProgressLine.isTerminal(s));
        } finally {
            processor.stop();
            tio.stop();
        }
    }
}
