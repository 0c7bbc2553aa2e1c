package dev.strata.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;

import org.junit.jupiter.api.Test;

class CommandSplitterTest {

    @Test
    void splitsOnSemicolonsAndNewlines() {
        assertEquals(List.of("dev:list", "dev:status disk0", "echo done"),
                CommandSplitter.split("dev:list; dev:status disk0\n echo done ;;"));
    }

    @Test
    void keepsSeparatorsInsideQuotesBracketsAndEscapes() {
        assertEquals(List.of("echo 'a;b'", "echo \"c;d\\\";e\"", "each [1 2] { echo $it; echo x }", "echo (a;b)", "echo a\\;b"),
                CommandSplitter.split("echo 'a;b'; echo \"c;d\\\";e\"; each [1 2] { echo $it; echo x }; echo (a;b); echo a\\;b"));
    }

    @Test
    void dropsCommentLinesAndBlanks() {
        assertEquals(List.of("dev:list", "echo '# not a comment'"),
                CommandSplitter.split("# a comment; still the comment\n\n  dev:list\n   # another\necho '# not a comment'\n"));
    }

    @Test
    void commandNameIsTheFirstWordUnlessAssignmentOrExpression() {
        assertEquals("dev:create", CommandSplitter.commandName("dev:create disk1 file path=x"));
        assertEquals("lb", CommandSplitter.commandName("lb"));
        assertNull(CommandSplitter.commandName("x = 5"));
        assertNull(CommandSplitter.commandName("$x"));
        assertNull(CommandSplitter.commandName("{ echo a }"));
        assertNull(CommandSplitter.commandName("(dev:list) size"));
    }
}
