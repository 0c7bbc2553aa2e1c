package dev.strata.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;

import org.junit.jupiter.api.Test;

class OptionsTest {

    @Test
    void noArgumentsIsInteractive() throws Exception {
        Main.Options o = Main.Options.parse(new String[0], Map.of());
        assertTrue(o.interactive());
        assertFalse(o.noDefaultStack);
    }

    @Test
    void commandsDaemonAndNoDefaultStack() throws Exception {
        Main.Options o = Main.Options.parse(new String[] {"--daemon", "-c", "a; b", "-c", "c", "--no-default-stack", "--timeout", "5"}, Map.of());
        assertFalse(o.interactive());
        assertTrue(o.daemon);
        assertTrue(o.noDefaultStack);
        assertEquals("a; b\nc", o.script());
        assertEquals(5, o.timeoutSeconds);
    }

    @Test
    void environment() throws Exception {
        Main.Options o = Main.Options.parse(new String[0], Map.of("STRATA_NO_DEFAULT_STACK", "1", "STRATA_TIMEOUT", "7"));
        assertTrue(o.noDefaultStack);
        assertEquals(7, o.timeoutSeconds);
        assertFalse(Main.Options.parse(new String[0], Map.of("STRATA_NO_DEFAULT_STACK", "false")).noDefaultStack);
    }

    @Test
    void mistakesAreOneLine() {
        assertEquals("unknown argument '--bogus'",
                assertThrows(Main.UsageException.class, () -> Main.Options.parse(new String[] {"--bogus"}, Map.of())).getMessage());
        assertThrows(Main.UsageException.class, () -> Main.Options.parse(new String[] {"-c"}, Map.of()));
        assertThrows(Main.UsageException.class, () -> Main.Options.parse(new String[] {"--timeout", "-1"}, Map.of()));
    }

    @Test
    void failureDescriptionIsOneLineWithoutClassNames() {
        assertEquals("bad size 7: must be a multiple of 512", Main.describe(new IllegalArgumentException("bad size 7:\n  must be a multiple of 512")));
        // no exception class names, not even for unexpected errors (the message says it)
        assertEquals("y", Main.describe(new NullPointerException("y")));
        assertEquals("disk gone", Main.describe(new RuntimeException(new java.io.IOException("disk gone"))));
        assertTrue(Main.describe(new NullPointerException()).startsWith("failed without a message"));
        // Gogo's CommandNotFoundException message, as the shell words it
        assertEquals("unknown command 'dev:lst': 'help' lists the commands",
                Main.describe(new IllegalArgumentException("Command not found: dev:lst")));
    }
}
