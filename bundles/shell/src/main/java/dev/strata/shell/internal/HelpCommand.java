package dev.strata.shell.internal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Descriptor;
import org.osgi.service.component.annotations.Component;

/**
 * {@code help}: Strata's commands first, each with the first clause of its description, grouped
 * by scope; then the shell's and the framework's own commands (Gogo, Felix, SCR, Configuration
 * Admin — most have no description) under one heading, their names only, one line per scope.
 * {@code help NAME}: the command's usage, with its whole description. Registered as
 * {@code strata:help}; the console's SCOPE puts {@code strata} first so the plain word
 * {@code help} finds this one, not Gogo's list of bare names.
 */
@Component(service = HelpCommand.class, property = {"osgi.command.scope=strata", "osgi.command.function=help"})
public final class HelpCommand {

    static final String BUILT_INS = "Built-in shell and framework commands (Gogo, Felix, SCR, Configuration Admin):";
    static final String FOOTER = "'help NAME' shows a command's usage; Tab completes commands, devices, types and keys.";
    /** Where a line of built-in names wraps. */
    private static final int WIDTH = 100;

    @Descriptor("list Strata's commands with a one-line description each, then the built-in ones by scope")
    public String help(CommandSession session) {
        return String.join("\n", listing(CommandInfo.all(session)));
    }

    @Descriptor("show a command's usage: its parameters and options")
    public String help(CommandSession session, @Descriptor("command, e.g. dev:create or create") String name) {
        CommandInfo c = CommandInfo.find(session, name);
        if (c == null) {
            throw new IllegalArgumentException("unknown command '" + name + "': 'help' lists the commands");
        }
        return String.join("\n", c.usage());
    }

    /** Up to the first {@code ": "} or {@code "; "} outside parentheses. */
    static String firstClause(String d) {
        int depth = 0;
        for (int i = 0; i + 1 < d.length(); i++) {
            char c = d.charAt(i);
            depth += c == '(' ? 1 : c == ')' ? -1 : 0;
            if (depth == 0 && (c == ':' || c == ';') && d.charAt(i + 1) == ' ') {
                return d.substring(0, i);
            }
        }
        return d;
    }

    /** The listing of {@code all} (sorted by name). */
    static List<String> listing(List<CommandInfo> all) {
        int width = 0;
        for (CommandInfo c : all) {
            width = c.strata ? Math.max(width, c.name.length()) : width;
        }
        List<String> lines = new ArrayList<>();
        String scope = null;
        Map<String, List<String>> builtIns = new LinkedHashMap<>();
        for (CommandInfo c : all) {
            if (!c.strata) {
                if (c.function().startsWith("__")) {
                    continue; // gogo.jline's completion helpers (__files, __usage_completion): not for typing
                }
                builtIns.computeIfAbsent(c.scope(), k -> new ArrayList<>()).add(c.function());
                continue;
            }
            if (!c.scope().equals(scope) && scope != null) {
                lines.add("");
            }
            scope = c.scope();
            String d = c.summary();
            lines.add(d.isEmpty() ? c.name : String.format("%-" + width + "s  %s", c.name, d));
        }
        if (!builtIns.isEmpty()) {
            lines.add("");
            lines.add(BUILT_INS);
            int pad = 0;
            for (String s : builtIns.keySet()) {
                pad = Math.max(pad, s.length() + 1);
            }
            for (Map.Entry<String, List<String>> e : builtIns.entrySet()) {
                StringBuilder line = new StringBuilder(String.format("  %-" + pad + "s", e.getKey() + ":"));
                int start = line.length();
                for (String f : e.getValue()) {
                    if (line.length() + 1 + f.length() > WIDTH && line.length() > start) {
                        lines.add(line.toString());
                        line = new StringBuilder(" ".repeat(start));
                    }
                    line.append(' ').append(f);
                }
                lines.add(line.toString());
            }
        }
        lines.add("");
        lines.add(FOOTER);
        return lines;
    }
}
