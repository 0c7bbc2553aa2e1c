package dev.strata.shell.internal;

import java.util.ArrayList;
import java.util.List;

import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Descriptor;
import org.osgi.service.component.annotations.Component;

/**
 * {@code help}: every command with its one-line description; {@code help NAME}: the command's
 * usage. Registered as {@code strata:help}; the console's SCOPE puts {@code strata} first so the
 * plain word {@code help} finds this one, not Gogo's list of bare names.
 */
@Component(service = HelpCommand.class, property = {"osgi.command.scope=strata", "osgi.command.function=help"})
public final class HelpCommand {

    @Descriptor("list the commands with a one-line description each")
    public String help(CommandSession session) {
        List<CommandInfo> all = CommandInfo.all(session);
        int width = 0;
        for (CommandInfo c : all) {
            width = Math.max(width, c.name.length());
        }
        List<String> lines = new ArrayList<>();
        String scope = null;
        for (CommandInfo c : all) {
            String s = c.name.substring(0, c.name.indexOf(':'));
            if (!s.equals(scope) && scope != null) {
                lines.add("");
            }
            scope = s;
            String d = c.description();
            lines.add(d.isEmpty() ? c.name : String.format("%-" + width + "s  %s", c.name, d));
        }
        lines.add("");
        lines.add("'help NAME' shows a command's usage; Tab completes commands, devices, types and keys.");
        return String.join("\n", lines);
    }

    @Descriptor("show a command's usage: its parameters and options")
    public String help(CommandSession session, @Descriptor("command, e.g. dev:create or create") String name) {
        CommandInfo c = CommandInfo.find(session, name);
        if (c == null) {
            throw new IllegalArgumentException("unknown command '" + name + "': 'help' lists the commands");
        }
        return String.join("\n", c.usage());
    }
}
