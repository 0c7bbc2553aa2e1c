package dev.strata.shell.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;

import org.apache.felix.gogo.runtime.CommandProcessorImpl;
import org.apache.felix.gogo.runtime.threadio.ThreadIOImpl;
import org.apache.felix.service.command.CommandSession;
import org.junit.jupiter.api.Test;

/** {@code help} lists Strata's commands first, described; the built-in ones after, by scope. */
class HelpCommandTest {

    @Test
    void strataCommandsComeFirstWithTheFirstClauseOfTheirDescriptionBuiltInsAreGrouped() throws Exception {
        CommandProcessorImpl processor = new CommandProcessorImpl(new ThreadIOImpl());
        processor.addCommand("log", new LogCommands(), "tail");
        processor.addCommand("strata", new HelpCommand(), "help");
        processor.addCommand("nbd", new BadArgumentsTest.Export(), "export");
        // built-ins: objects of no Strata bundle, without descriptions, as Gogo's own are
        processor.addCommand("gogo", new ArrayList<String>(), "size");
        processor.addCommand("gogo", new ArrayList<String>(), "clear");
        processor.addCommand("felix", new StringBuilder(), "reverse");
        CommandSession session = processor.createSession(new ByteArrayInputStream(new byte[0]),
                new ByteArrayOutputStream(), new ByteArrayOutputStream());
        try {
            List<String> lines = List.of(String.valueOf(session.execute("strata:help")).split("\n"));
            int builtIns = lines.indexOf(HelpCommand.BUILT_INS);
            assertTrue(builtIns > 0, String.join("\n", lines));
            for (int i = 0; i < builtIns; i++) {
                String l = lines.get(i);
                assertTrue(l.isEmpty() || l.matches("(log|nbd|strata):\\S+\\s{2,}\\S.*"), "described: " + l);
            }
            assertTrue(lines.contains("nbd:export   export a device over NBD (the export persists until nbd:unexport)"), String.join("\n", lines));
            assertEquals(List.of("  felix: reverse", "  gogo:  clear size", "", HelpCommand.FOOTER),
                    lines.subList(builtIns + 1, lines.size()));
            // help NAME keeps the whole description
            assertTrue(String.valueOf(session.execute("help log:tail")).contains("NUMBER         number of lines (default 20)"));
        } finally {
            session.close();
        }
    }

    @Test
    void aListingShowsTheDescriptionsFirstClause() {
        assertEquals("create a device", clause("create a device: dev:create [--transient] NAME TYPE KEY=VALUE…"));
        assertEquals("list what is configured but not up (devices not active, exports not serving)",
                clause("list what is configured but not up (devices not active, exports not serving); empty when all is well"));
        assertEquals("move a leg (e.g. a: b) away", clause("move a leg (e.g. a: b) away"));
    }

    private static String clause(String description) {
        return HelpCommand.firstClause(description);
    }
}
