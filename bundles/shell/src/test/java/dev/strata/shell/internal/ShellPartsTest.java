package dev.strata.shell.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ShellPartsTest {

    @Test
    void errorMessagesCarryNoClassNames() {
        assertEquals("disk gone", ErrorLines.message(new RuntimeException(new IOException("disk gone"))));
        assertEquals("bad size: must be a multiple of 512", ErrorLines.message(new IllegalArgumentException("bad size:\n must be a multiple of 512")));
        assertTrue(ErrorLines.message(new NullPointerException()).startsWith("failed without a message"));
        assertTrue(ErrorLines.interrupted(new IOException("x", new InterruptedException())));
        assertTrue(ErrorLines.interrupted(new InterruptedIOException()));
        assertFalse(ErrorLines.interrupted(new java.net.SocketTimeoutException()));
        assertEquals("dev:create", ErrorLines.firstWord("  dev:create x; echo y"));
        assertEquals(ErrorLines.BARE_REFRESH, ErrorLines.describe(new NullPointerException(), " refresh ", null));
        assertFalse(ErrorLines.bareRefresh("refresh 7"));
    }

    @Test
    void exportsTableIsReadByItsHeaderColumns() {
        String table = String.join("\n",
                "name  device  address          readonly  state                                  connections",
                "wb0   wb0     127.0.0.1:10809  false     waiting: bind failed: Address already in use  0",
                "f0    f0      127.0.0.1:10810  false     serving                                0");
        List<Map<String, String>> rows = HealthCommand.parseTable(table);
        assertEquals(2, rows.size());
        assertEquals("127.0.0.1:10809", rows.get(0).get("address"));
        assertEquals("export wb0: 127.0.0.1:10809 is in use (by another process? choose another port)",
                HealthCommand.exportProblem("wb0", rows.get(0).get("address"), "waiting: Address already in use"));
        assertNull(HealthCommand.exportProblem("f0", "x", rows.get(1).get("state").split("\\s+")[0]));
        assertTrue(HealthCommand.parseTable("no exports").isEmpty());
    }

    @Test
    void deviceProblemsSayWhatTheDeviceWaitsFor() {
        assertNull(HealthCommand.deviceProblem("a", Map.of("state", "active")));
        assertEquals("device wb0: waiting for target type 'writeboost'",
                HealthCommand.deviceProblem("wb0", Map.of("state", "waiting_for_target", "waiting_for", "target type 'writeboost'")));
        assertEquals("device x: waiting for valid arguments; last error: bad size",
                HealthCommand.deviceProblem("x", Map.of("state", "waiting-for-target", "waiting_for", "valid arguments", "last_error", "bad size")));
        assertEquals("device s: suspended", HealthCommand.deviceProblem("s", Map.of("state", "suspended")));
    }

    @Test
    void commandWordsSayWhichWordsAreDevicesTypesAndKeys() {
        CommandWords.Syntax create = CommandWords.of("dev:create");
        assertEquals(List.of("--transient"), create.flags());
        assertEquals("NEW", create.kindAt(0));
        assertEquals("TYPE", create.kindAt(1));
        assertEquals("KEY=VALUE…", create.kindAt(5)); // the last kind repeats
        assertEquals("memory", create.wordOf("TYPE", List.of("m9", "memory")));
        CommandWords.Syntax status = CommandWords.of("dev:status");
        assertEquals("DEVICE", status.kindAt(0));
        assertNull(status.kindAt(1)); // one device only
        assertEquals("KEY", CommandWords.of("dev:message").kindAt(1));
        assertEquals("MODE", CommandWords.of("cache:mode").kindAt(1));
        assertTrue(CommandWords.modes().contains("writethrough"));
        CommandWords.Syntax attach = CommandWords.of("cache:attach");
        assertEquals("TYPE", attach.kindAt(1));
        assertEquals("KEY=VALUE…", attach.kindAt(2)); // cache=CDEV and the type's other arguments
        assertEquals(List.of("--keep-cache", "--cancel"), CommandWords.of("cache:detach").flags());
        assertEquals("TYPE", CommandWords.of("cache:switch").kindAt(1));
        assertEquals(List.of("--cancel"), CommandWords.of("cache:resize").flags());
        assertNull(CommandWords.of("cache:resize").kindAt(1)); // size=… is free text
        for (String c : List.of("dev:info", "dev:remove", "dev:reload", "dev:suspend", "dev:resume", "cache:stats",
                "cache:set", "cache:writeback", "cache:detach", "cache:attach", "cache:switch", "cache:resize",
                "nbd:export")) {
            assertEquals("DEVICE", CommandWords.of(c).kindAt(0), c);
        }
        assertEquals("MIRROR", CommandWords.of("mirror:status").kindAt(0));
        assertEquals("MIRROR", CommandWords.of("mirror:resync").kindAt(0));
        for (String c : List.of("mirror:recover", "mirror:fail")) {
            CommandWords.Syntax s = CommandWords.of(c);
            assertEquals("MIRROR", s.kindAt(0), c);
            assertEquals("LEG", s.kindAt(1), c);
            assertNull(s.kindAt(2), c);
            assertEquals("m0", s.wordOf("MIRROR", List.of("m0")), c);
        }
        assertNull(CommandWords.of("felix:lb"));
    }

    @Test
    void aDescriptorThatIsASyntaxIsShownAsItIs() {
        assertTrue(new CommandInfo.Param("[--force] NAME", true).syntax());
        assertEquals("NAME", new CommandInfo.Param("NAME", true).label());
        assertEquals("DEV KEY VALUE, or DEV KEY=VALUE", new CommandInfo.Param("DEV KEY VALUE, or DEV KEY=VALUE", true).label());
        assertFalse(new CommandInfo.Param("cache device name", false).syntax());
        assertEquals("DEVICE", new CommandInfo.Param("cache device name", false).label());
        assertFalse(new CommandInfo.Param("Name or ID of the component", false).syntax());
        assertEquals("writeback|writethrough|passthrough",
                new CommandInfo.Param("writeback, writethrough or passthrough", false).label());
    }

    @Test
    void usageLinesGiveTheKeysAndTheirPlaceholders() {
        Map<String, String> keys = ConsoleCompleter.usageKeys("writeboost backing=DEV cache=DEV [format=true] [bypass_threshold=1M]");
        assertEquals(List.of("backing", "cache", "format", "bypass_threshold"), List.copyOf(keys.keySet()));
        assertEquals("DEV", keys.get("backing"));
        assertEquals(List.of("path", "size", "create"),
                List.copyOf(ConsoleCompleter.usageKeys("file path=FILE [size=SIZE] [create=false]  — a regular file; create=true creates it").keySet()));
    }

    @Test
    void legsComeFromTheMirrorsLegStatusKeys() {
        Map<String, String> status = new java.util.LinkedHashMap<>();
        status.put("state", "active");
        status.put("leg.a", "in_sync");
        status.put("legs", "x");
        status.put("leg.b", "out_of_sync");
        status.put("reads.a", "3");
        assertEquals(Map.of("a", "in_sync", "b", "out_of_sync"), ConsoleCompleter.legsOf(status));
        assertEquals(List.of("a", "b"), List.copyOf(ConsoleCompleter.legsOf(status).keySet()));
    }

    @Test
    void logTailReadsTheLastLines(@TempDir Path dir) throws IOException {
        Path f = dir.resolve("strata.log");
        StringBuilder s = new StringBuilder();
        for (int i = 1; i <= 5000; i++) {
            s.append("line ").append(i).append('\n');
        }
        Files.writeString(f, s);
        assertEquals(List.of("line 4998", "line 4999", "line 5000"), LogCommands.lastLines(f, 3));
        assertEquals(5000, LogCommands.lastLines(f, 9000).size());
        Files.writeString(f, "only\n");
        assertEquals(List.of("only"), LogCommands.lastLines(f, 20));
        assertEquals(Path.of("/h/var/log/strata.log"), LogCommands.logFile(null, "/h"));
    }
}
