package dev.strata.shell.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.util.Arrays;
import java.util.List;

import org.apache.felix.gogo.runtime.CommandProcessorImpl;
import org.apache.felix.gogo.runtime.threadio.ThreadIOImpl;
import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A word Gogo cannot convert gets one line naming the command, the option or parameter, the word
 * and what is expected. The failures are real: a real Gogo 1.1.6 command processor runs the
 * lines and throws its own "Cannot coerce …"; the lines are what the console and
 * {@code bin/strata -c} print for them.
 */
class BadArgumentsTest {

    /** nbd:export's options, as NbdCommands declares them (the nbd bundle is not a dependency here). */
    public static final class Export {
        @Descriptor("export a device over NBD (the export persists until nbd:unexport)")
        public String export(
                @Descriptor("export name (default: the device name)") @Parameter(names = "--name", absentValue = "") String name,
                @Descriptor("TCP port (1 to 65535, default 10809; exports may share a port)")
                @Parameter(names = "--port", absentValue = "10809") int port,
                @Descriptor("refuse writes") @Parameter(names = "--readonly", presentValue = "true", absentValue = "false")
                boolean readOnly,
                @Descriptor("number of clients served at once; the next one is refused (default 0: no limit)")
                @Parameter(names = "--max-connections", absentValue = "0") int maxConnections,
                @Descriptor("the device to export") String device) {
            return "exported " + device + " on " + port;
        }
    }

    public enum Mode { WRITEBACK, WRITETHROUGH }

    /** Typed positional parameters: an enum, a byte and a list of longs. */
    public static final class Typed {
        @Descriptor("set the mode")
        public String mode(@Descriptor("the device") String device, @Descriptor("the mode") Mode mode) {
            return device + " " + mode;
        }

        @Descriptor("set a small number")
        public String level(@Descriptor("level (e.g. 3)") byte level) {
            return "level " + level;
        }

        @Descriptor("add numbers")
        public String sum(@Descriptor("numbers to add") long... n) {
            return "sum " + Arrays.stream(n).sum();
        }
    }

    private CommandProcessorImpl processor;
    private CommandSession session;

    @BeforeEach
    void session() {
        processor = new CommandProcessorImpl(new ThreadIOImpl());
        processor.addCommand("log", new LogCommands(), "tail");
        processor.addCommand("nbd", new Export(), "export");
        for (String f : List.of("mode", "level", "sum")) {
            processor.addCommand("t", new Typed(), f);
        }
        session = processor.createSession(new ByteArrayInputStream(new byte[0]), new ByteArrayOutputStream(), new ByteArrayOutputStream());
    }

    @AfterEach
    void close() {
        session.close();
    }

    /** Runs {@code line} in real Gogo, which must fail, and returns the line printed for it. */
    private String failure(String line) {
        Exception e = assertThrows(Exception.class, () -> session.execute(line), line);
        assertTrue(e.getMessage().startsWith("Cannot coerce") || e.getMessage().equals("argument type mismatch"),
                "Gogo's own failure: " + e.getMessage());
        String printed = ErrorLines.describe(e, line, session);
        assertEquals(1, printed.lines().count(), printed);
        assertTrue(!printed.contains("Exception") && !printed.contains("Cannot coerce") && !printed.contains("Token"), printed);
        return printed;
    }

    @Test
    void aNumericOptionGivenTextNamesTheOptionTheWordAndAnExample() throws Exception {
        assertEquals("exported wb0 on 10950", session.execute("nbd:export --port 10950 wb0")); // the fixture fits
        assertEquals("error: nbd:export: --port \"abc\" is not a number; give the TCP port as a whole number, e.g. 10809",
                failure("nbd:export wb0 --port abc"));
        assertEquals("error: nbd:export: --max-connections \"many\" is not a number;"
                + " give the number of clients served at once as a whole number, e.g. 0", failure("nbd:export --max-connections many wb0"));
        // past int: the range the descriptor gives, as the command says for 0 or 70000, not int's
        assertEquals("error: nbd:export: --port \"99999999999\" is out of range; use 1 to 65535",
                failure("nbd:export --port 99999999999 wb0"));
        assertEquals("error: nbd:export: --port \"1.5\" is not a number; give the TCP port as a whole number, e.g. 10809",
                failure("nbd:export --port 1.5 wb0"));
        assertEquals("error: nbd:export: --port needs a value: the TCP port, e.g. 10809", failure("nbd:export wb0 --port"));
    }

    @Test
    void aNumericParameterGivenTextNamesTheParameter() {
        assertEquals("error: log:tail: NUMBER \"abc\" is not a number; give the number of lines as a whole number, e.g. 20",
                failure("log:tail abc"));
        assertEquals("error: log:tail: NUMBER \"x\" is not a number; give the number of lines as a whole number, e.g. 20",
                failure("log:tail --platform x"));
        // the failing statement of several on a line, found by its function
        assertEquals("error: log:tail: NUMBER \"abc\" is not a number; give the number of lines as a whole number, e.g. 20",
                failure("t:sum 1; tail 'abc'"));
    }

    @Test
    void missingExtraAndUnknownWordsAreOneLineToo() {
        assertEquals("error: nbd:export: missing DEVICE (the device to export);"
                + " usage: nbd:export [--max-connections VALUE] [--name VALUE] [--port VALUE] [--readonly] DEVICE",
                failure("nbd:export"));
        assertEquals("error: nbd:export: unknown option --prot; 'help nbd:export' lists its options",
                failure("nbd:export --prot 10950 wb0"));
        assertEquals("error: log:tail: unexpected \"2\"; usage: log:tail [--platform] NUMBER", failure("log:tail 1 2"));
    }

    @Test
    void enumsBytesAndListsSayWhatTheyTake() throws Exception {
        assertEquals("d0 WRITEBACK", session.execute("t:mode d0 writeback"));
        assertEquals("error: t:mode: MODE \"fast\" is not one of writeback, writethrough", failure("t:mode d0 fast"));
        assertEquals("error: t:level: LEVEL \"300\" is out of range (-128 to 127); give the level as a whole number"
                + " from -128 to 127, e.g. 3", failure("t:level 300"));
        assertEquals("sum 3", session.execute("t:sum 1 2"));
        assertEquals("error: t:sum: NUMBERS… \"two\" is not a number; give the numbers to add as a whole number",
                failure("t:sum 1 two"));
    }

    @Test
    void wordsThatCannotBeReadBeforeTheyRunFitAnything() {
        // $x is read when the line runs: no word is blamed, the line still is one and says where the usage is
        session.put("x", "abc");
        assertEquals("error: log:tail: wrong or missing arguments; 'help log:tail' shows the usage", failure("log:tail $x"));
        assertEquals(List.of(List.of("a", "b c", "d"), List.of("e")), BadArguments.statements("a 'b c' \"d\"; e"));
        assertEquals(Arrays.asList("x", null, null), BadArguments.statements("x $y {a b}").get(0));
        assertNull(BadArguments.unfit(String.class, "anything"));
        assertEquals("is not a number", BadArguments.unfit(int.class, "1.5"));
    }
}
