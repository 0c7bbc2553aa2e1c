package dev.strata.shell.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Dictionary;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import org.apache.felix.service.command.CommandProcessor;
import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Descriptor;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;

import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceManager;

/**
 * {@code strata:health}: one line per thing that is configured but not up — a device that is not
 * active ({@code device wb0: waiting for target type 'writeboost'}), an export that is not
 * serving ({@code export wb0: 127.0.0.1:10809 is in use}). Empty when everything is up. The
 * launcher waits (bounded) for it to be empty before {@code --daemon} says {@code ready}, and
 * prints what is left; the interactive shell prints the same lines at start.
 *
 * <p>Exports are read from {@code nbd:exports} (the NBD bundle exports no API; its table's
 * {@code name} and {@code state} columns are what it shows users too).
 */
@Component(service = HealthCommand.class, property = {"osgi.command.scope=strata", "osgi.command.function=health"})
public final class HealthCommand {

    static final String COMMAND = "strata:health";
    static final String DEVICE_PID = "dev.strata.device";
    static final String EXPORT_PID = "dev.strata.nbd.export";

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    volatile DeviceManager devices;
    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    volatile ConfigurationAdmin configAdmin;
    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    volatile CommandProcessor processor;

    @Descriptor("list what is configured but not up (devices not active, exports not serving); empty when all is well")
    public List<String> health() {
        List<String> problems = new ArrayList<>();
        problems.addAll(deviceProblems());
        problems.addAll(exportProblems());
        return problems;
    }

    List<String> deviceProblems() {
        List<String> out = new ArrayList<>();
        DeviceManager dm = devices;
        Set<String> configured = configuredNames(DEVICE_PID, "name");
        if (dm == null) {
            if (!configured.isEmpty()) {
                out.add("devices " + String.join(", ", configured) + ": the device manager (bundle dev.strata.core) is not running");
            }
            return out;
        }
        for (DeviceInfo d : dm.list()) {
            configured.remove(d.name());
            Map<String, String> s;
            try {
                s = dm.status(d.name());
            } catch (IOException | RuntimeException e) {
                continue; // removed meanwhile
            }
            String problem = deviceProblem(d.name(), s);
            if (problem != null) {
                out.add(problem);
            }
        }
        for (String name : configured) {
            out.add("device " + name + ": configured but not created yet (see log:tail)");
        }
        return out;
    }

    /** The problem line of one device from its {@code dev:status} keys, or null if it is active. */
    static String deviceProblem(String name, Map<String, String> status) {
        String state = status.getOrDefault("state", "").toLowerCase(Locale.ROOT).replace('-', '_');
        if (state.equals("active")) {
            return null;
        }
        String waiting = status.get("waiting_for");
        String error = status.get("last_error");
        String what = waiting != null && !waiting.isBlank() ? "waiting for " + waiting
                : state.isEmpty() ? "not active" : state.replace('_', ' ');
        return "device " + name + ": " + what + (error != null && !error.isBlank() ? "; last error: " + error : "");
    }

    List<String> exportProblems() {
        List<String> out = new ArrayList<>();
        Set<String> configured = configuredNames(EXPORT_PID, "name");
        String table = run("nbd:exports");
        if (table == null) {
            if (!configured.isEmpty()) {
                out.add("exports " + String.join(", ", configured) + ": the NBD bundle (dev.strata.nbd) is not running");
            }
            return out;
        }
        for (Map<String, String> row : parseTable(table)) {
            String name = row.getOrDefault("name", "");
            configured.remove(name);
            String problem = exportProblem(name, row.getOrDefault("address", ""), row.getOrDefault("state", ""));
            if (problem != null) {
                out.add(problem);
            }
        }
        for (String name : configured) {
            out.add("export " + name + ": configured but not started yet (see log:tail)");
        }
        return out;
    }

    /** The problem line of one export from its state, or null if it is serving. */
    static String exportProblem(String name, String address, String state) {
        if (state.equals("serving")) {
            return null;
        }
        String why = state.startsWith("waiting: ") ? state.substring("waiting: ".length()) : state;
        if (why.toLowerCase(Locale.ROOT).contains("address already in use")) {
            return "export " + name + ": " + address + " is in use (by another process? choose another port)";
        }
        return "export " + name + ": " + (why.isBlank() ? "not serving" : "not serving: " + why);
    }

    /**
     * The rows of a plain-text table whose header names its columns, cells padded to the header's
     * column positions (the way {@code nbd:exports} prints).
     */
    static List<Map<String, String>> parseTable(String table) {
        List<String> lines = table.lines().filter(l -> !l.isBlank()).toList();
        List<Map<String, String>> rows = new ArrayList<>();
        if (lines.isEmpty() || !lines.get(0).startsWith("name")) {
            return rows; // "no exports"
        }
        String header = lines.get(0);
        List<String> names = new ArrayList<>();
        List<Integer> starts = new ArrayList<>();
        for (int i = 0; i < header.length(); i++) {
            if (header.charAt(i) != ' ' && (i == 0 || header.charAt(i - 1) == ' ')) {
                starts.add(i);
                int end = header.indexOf(' ', i);
                names.add(header.substring(i, end < 0 ? header.length() : end));
            }
        }
        for (String line : lines.subList(1, lines.size())) {
            Map<String, String> row = new LinkedHashMap<>();
            for (int c = 0; c < names.size(); c++) {
                int from = Math.min(starts.get(c), line.length());
                int to = c + 1 < starts.size() ? Math.min(starts.get(c + 1), line.length()) : line.length();
                row.put(names.get(c), line.substring(from, Math.max(from, to)).strip());
            }
            rows.add(row);
        }
        return rows;
    }

    private Set<String> configuredNames(String factoryPid, String key) {
        Set<String> out = new LinkedHashSet<>();
        ConfigurationAdmin cm = configAdmin;
        if (cm == null) {
            return out;
        }
        try {
            Configuration[] configs = cm.listConfigurations("(service.factoryPid=" + factoryPid + ")");
            if (configs != null) {
                for (Configuration c : configs) {
                    Dictionary<String, Object> p = c.getProperties();
                    Object v = p == null ? null : p.get(key);
                    if (v != null && !v.toString().isBlank()) {
                        out.add(v.toString().trim());
                    }
                }
            }
        } catch (IOException | InvalidSyntaxException | RuntimeException e) {
            // cannot tell: report what the services themselves know
        }
        return out;
    }

    /** Runs a command in a private session and returns what it printed and returned, or null. */
    private String run(String command) {
        CommandProcessor p = processor;
        if (p == null) {
            return null;
        }
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(buf, true, StandardCharsets.UTF_8);
        try (CommandSession s = p.createSession(InputStream.nullInputStream(), out, out)) {
            if (CommandInfo.resolve(s, command) == null) {
                return null;
            }
            Object result = s.execute(command);
            return result == null ? buf.toString(StandardCharsets.UTF_8) : result.toString();
        } catch (Exception e) {
            return null;
        }
    }
}
