package dev.strata.shell.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.reflect.Method;
import java.util.List;

import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.junit.jupiter.api.Test;

/**
 * The dev: commands take their words as one varargs parameter described by a synopsis
 * ({@code "[--force] NAME TYPE KEY=VALUE…"}) so that they accept KEY=VALUE and KEY VALUE alike;
 * completion and help must read the synopsis, or Tab completes nothing after the command word.
 */
class SynopsisCommandsTest {

    /** The shapes of dev.strata.core's DeviceCommands and cache-commands' CacheCommands. */
    public static final class Commands {
        @Descriptor("create a device")
        public String create(@Descriptor("[--transient] NAME TYPE KEY=VALUE…") String... words) {
            return "";
        }

        @Descriptor("show a device's counters")
        public String status(@Descriptor("NAME") String... words) {
            return "";
        }

        @Descriptor("send a tunable")
        public String message(@Descriptor("[--transient] NAME KEY VALUE, or NAME KEY=VALUE") String... words) {
            return "";
        }

        @Descriptor("set a tunable")
        public String set(CommandSession session,
                @Descriptor("a one-off") @Parameter(names = "--transient", presentValue = "true", absentValue = "false") boolean transientOnly,
                @Descriptor("DEV KEY VALUE, or DEV KEY=VALUE") String... args) {
            return "";
        }

        @Descriptor("list the target types")
        public String targets(@Descriptor("no arguments") String... words) {
            return "";
        }

        @Descriptor("free text stays free text")
        public String echo(@Descriptor("words to print") String... words) {
            return "";
        }
    }

    private static CommandInfo command(String name) {
        String function = name.substring(name.indexOf(':') + 1);
        for (Method m : Commands.class.getMethods()) {
            if (m.getName().equals(function)) {
                return new CommandInfo(name, List.of(m));
            }
        }
        throw new AssertionError(name);
    }

    private static List<String> kinds(CommandInfo c) {
        return c.params().stream().map(CommandInfo.Param::kind).toList();
    }

    @Test
    void synopsisWordsBecomeParametersCompletionUnderstands() {
        assertEquals(List.of("DEVICE", "TYPE", "KEY=VALUE…"), kinds(command("dev:create")));
        assertEquals(List.of("DEVICE"), kinds(command("dev:status")));
        assertEquals(List.of("DEVICE", "KEY", "VALUE"), kinds(command("dev:message")));
        assertEquals(List.of("DEVICE", "KEY", "VALUE"), kinds(command("cache:set")));
        assertEquals(List.of(), kinds(command("dev:targets")));
        assertEquals(List.of("WORDS…"), kinds(command("gogo:echo")));
        assertEquals(true, command("dev:create").params().get(2).varargs());
    }

    @Test
    void synopsisOptionsAreCompletedAndShownInTheUsage() {
        assertEquals(List.of("--transient"), command("dev:create").options().stream().map(o -> o.names().get(0)).toList());
        assertEquals(List.of("--transient"), command("cache:set").options().stream().map(o -> o.names().get(0)).toList());
        assertEquals("usage: dev:create [--transient] NAME TYPE KEY=VALUE…", command("dev:create").usage().get(0));
        assertEquals("usage: dev:status NAME", command("dev:status").usage().get(0));
    }
}
