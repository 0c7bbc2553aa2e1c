package dev.strata.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.util.List;

import org.junit.Test;

/**
 * Bad words given to a command, from {@code bin/strata -c} and from lines piped into the shell:
 * one line each, naming the command, the option or parameter, the word and what is expected; no
 * usage text, no Gogo message, no class name; {@code -c} still stops at the failure with exit 1.
 * Without the default stack, so no port is bound (the bad {@code nbd:export}s never get that far).
 */
public class ShellErrorLinesIT {

    private static final String PORT = "error: nbd:export: --port \"abc\" is not a number; give the TCP port as a whole number, e.g. 10809";
    private static final String LINES = "error: log:tail: NUMBER \"abc\" is not a number; give the number of lines as a whole number, e.g. 20";

    @Test
    public void aScriptStopsAtAWordTheCommandCannotTakeWithOneLine() {
        Distribution d = Distribution.copy("errors-c");
        for (String[] c : List.of(new String[] {"nbd:export wb0 --port abc", PORT}, new String[] {"log:tail abc", LINES},
                new String[] {"nbd:export --max-connections x m0",
                        "error: nbd:export: --max-connections \"x\" is not a number; give the number of clients served at once as a whole number, e.g. 0"})) {
            Distribution.Result r = d.run("--no-default-stack", "-c", "echo before; " + c[0] + "; echo after");
            assertEquals(r.toString(), 1, r.exit());
            assertEquals(r.toString(), List.of(c[1]), r.errLines());
            assertTrue(r.toString(), r.out().contains("before"));
            assertFalse("the script stopped: " + r, r.out().contains("after"));
        }
    }

    @Test
    public void linesPipedIntoTheShellGetTheSameLinesAndHelpPutsStrataFirst() {
        Distribution d = Distribution.copy("errors-piped");
        Distribution.Result r = d.runWithInput("nbd:export wb0 --port abc\nlog:tail abc\nhelp\nexit\n", "--no-default-stack");
        assertEquals(r.toString(), 0, r.exit());
        List<String> out = r.out().lines().toList();
        assertTrue(r.toString(), out.contains(PORT) && out.contains(LINES));
        assertFalse("no usage text: " + r, r.out().contains("usage:") || r.out().contains("Cannot coerce") || r.out().contains("Exception"));
        int heading = out.indexOf("Built-in shell and framework commands (Gogo, Felix, SCR, Configuration Admin):");
        int export = -1;
        for (int i = 0; i < out.size() && export < 0; i++) {
            export = out.get(i).matches("nbd:export\\s+export a device over NBD.*") ? i : -1;
        }
        assertTrue(r.toString(), export >= 0 && heading > export);
        assertTrue(r.toString(), out.subList(heading, out.size()).stream().anyMatch(l -> l.matches("  gogo:\\s+.*\\bcat\\b.*")));
    }
}
