package dev.strata.core.internal.command;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.felix.service.command.Descriptor;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceManager;
import dev.strata.api.InvalidArgumentException;
import dev.strata.core.internal.DeviceDefinition;
import dev.strata.core.internal.DeviceManagerImpl;

/**
 * The {@code dev:} Gogo commands: parse, delegate to the manager, render. Each command takes its
 * words as one list and parses them itself ({@link Words}), so that a missing or wrong word gets
 * the command's usage line rather than Gogo's overload error, options go anywhere, and tunables
 * are {@code KEY=VALUE} or {@code KEY VALUE}.
 */
@Component(service = DeviceCommands.class, property = {
        "osgi.command.scope=dev",
        "osgi.command.function=create", "osgi.command.function=list", "osgi.command.function=info",
        "osgi.command.function=status", "osgi.command.function=table", "osgi.command.function=message",
        "osgi.command.function=suspend", "osgi.command.function=resume", "osgi.command.function=reload",
        "osgi.command.function=remove", "osgi.command.function=targets"})
public final class DeviceCommands {
    static final String CREATE = "dev:create [--transient] NAME TYPE KEY=VALUE… (see dev:targets)";
    static final String LIST = "dev:list [--bytes] [--tree]";
    static final String INFO = "dev:info [--bytes] NAME";
    static final String STATUS = "dev:status [--bytes] NAME";
    static final String TABLE = "dev:table [NAME]";
    static final String MESSAGE = "dev:message [--transient] NAME KEY VALUE (or KEY=VALUE)";
    static final String SUSPEND = "dev:suspend NAME";
    static final String RESUME = "dev:resume NAME";
    static final String RELOAD = "dev:reload [--force] NAME TYPE KEY=VALUE…";
    static final String REMOVE = "dev:remove [--force] NAME";
    static final String TARGETS = "dev:targets";

    private static final String TRANSIENT = "--transient";
    private static final String FORCE = "--force";
    private static final String BYTES = "--bytes";
    private static final String TREE = "--tree";

    @Reference
    DeviceManager manager;

    public DeviceCommands() {
    }

    /** For tests. */
    public DeviceCommands(DeviceManager manager) {
        this.manager = manager;
    }

    @Descriptor("create a device: " + CREATE + "; --transient: never stored, gone after a restart")
    public String create(@Descriptor("[--transient] NAME TYPE KEY=VALUE…") String... words) throws IOException {
        Words w = new Words(CREATE, Set.of(TRANSIENT), words);
        String name = w.get(0, "the device name");
        String type = w.get(1, "the target type");
        Map<String, String> args = w.arguments(2);
        // System.out is the console of the command's session (Gogo's thread I/O), where the build runs
        BuildProgressLine progress = new BuildProgressLine(System.out, name, System::nanoTime);
        try {
            if (!w.has(TRANSIENT)) {
                return Render.created(manager.create(name, type, args, progress));
            }
            if (manager instanceof DeviceManagerImpl impl) {
                return Render.created(impl.createTransient(name, type, args, progress));
            }
        } finally {
            progress.end();
        }
        throw new InvalidArgumentException("this device manager cannot create transient devices");
    }

    @Descriptor("list the devices: " + LIST + " (sizes in bytes with --bytes; --tree draws each stack from its top "
            + "device down)")
    public String list(@Descriptor("[--bytes] [--tree]") String... words) {
        Words w = new Words(LIST, Set.of(BYTES, TREE), words).atMost(0);
        return w.has(TREE) ? Tree.render(manager.list(), w.has(BYTES)) : Render.devices(manager.list(), w.has(BYTES));
    }

    @Descriptor("show a device: identity, type, size, state, what it is stacked on and what uses it: " + INFO)
    public String info(@Descriptor("[--bytes] NAME") String... words) {
        Words w = new Words(INFO, Set.of(BYTES), words).atMost(1);
        String name = w.get(0, "the device name");
        DeviceInfo d = manager.info(name).orElseThrow(() -> unknown(name));
        return Render.info(d, definition(d), w.has(BYTES));
    }

    @Descriptor("show a device's counters, its own (state, I/O counts) then its target's: " + STATUS
            + " (sizes in bytes with --bytes)")
    public String status(@Descriptor("[--bytes] NAME") String... words) throws IOException {
        Words w = new Words(STATUS, Set.of(BYTES), words).atMost(1);
        return Render.status(manager.status(w.get(0, "the device name")), w.has(BYTES));
    }

    @Descriptor("print device definitions as 'name type key=value…', lower devices first: " + TABLE)
    public String table(@Descriptor("[NAME]") String... words) {
        Words w = new Words(TABLE, Set.of(), words).atMost(1);
        return Render.definitions(definitions(w.count() == 0 ? null : w.get(0, "the device name")));
    }

    @Descriptor("send a tunable or an action to a device's target: " + MESSAGE
            + "; a tunable is kept in the definition (restart, reload) unless --transient")
    public String message(@Descriptor("[--transient] NAME KEY VALUE, or NAME KEY=VALUE") String... words)
            throws IOException {
        Words w = new Words(MESSAGE, Set.of(TRANSIENT), words);
        String name = w.get(0, "the device name");
        Map.Entry<String, String> t = w.tunable(1);
        boolean persist = !w.has(TRANSIENT);
        String note = null;
        if (manager instanceof DeviceManagerImpl impl) {
            note = impl.messageReporting(name, t.getKey(), t.getValue(), persist);
        } else {
            manager.message(name, t.getKey(), t.getValue(), persist);
        }
        String once = persist || (note != null && note.contains("not kept")) ? "" : "this time only: not kept";
        String all = note == null ? once : once.isEmpty() ? note : note + "; " + once;
        return name + ": " + t.getKey() + "=" + t.getValue() + (all.isEmpty() ? "" : " (" + all + ")") + "\n";
    }

    @Descriptor("suspend a device: new I/O waits, in-flight I/O drains, the target makes everything durable: " + SUSPEND)
    public String suspend(@Descriptor("NAME") String... words) throws IOException {
        String name = new Words(SUSPEND, Set.of(), words).atMost(1).get(0, "the device name");
        manager.suspend(name);
        return "suspended " + name + "\n";
    }

    @Descriptor("resume a suspended device; waiting I/O proceeds: " + RESUME)
    public String resume(@Descriptor("NAME") String... words) throws IOException {
        String name = new Words(RESUME, Set.of(), words).atMost(1).get(0, "the device name");
        manager.resume(name);
        return "resumed " + name + "\n";
    }

    @Descriptor("replace a device's target under a short suspend: " + RELOAD
            + "; refused while the target holds dirty data the new one cannot adopt, unless --force")
    public String reload(@Descriptor("[--force] NAME TYPE KEY=VALUE…") String... words) throws IOException {
        Words w = new Words(RELOAD, Set.of(FORCE), words);
        String name = w.get(0, "the device name");
        String type = w.get(1, "the new target type");
        Map<String, String> args = w.arguments(2);
        boolean force = w.has(FORCE);
        if (manager instanceof DeviceManagerImpl impl) {
            String note = impl.reloadReporting(name, type, args, force);
            DeviceInfo d = manager.info(name).orElseThrow(() -> unknown(name));
            return Render.reloaded(d) + (note == null ? "" : "warning: " + note + "\n");
        }
        return Render.reloaded(manager.reload(name, type, args, force));
    }

    @Descriptor("remove a device; refused while a device above or an export uses it, or while it holds dirty "
            + "data, unless --force; its data stays on disk: " + REMOVE)
    public String remove(@Descriptor("[--force] NAME") String... words) throws IOException {
        Words w = new Words(REMOVE, Set.of(FORCE), words).atMost(1);
        String name = w.get(0, "the device name");
        boolean force = w.has(FORCE);
        String note = null;
        if (manager instanceof DeviceManagerImpl impl) {
            note = impl.removeReporting(name, force);
        } else {
            manager.remove(name, force);
        }
        return "removed " + name + "\n" + (note == null ? "" : "warning: " + note + "\n");
    }

    @Descriptor("list the available target types with their arguments and providing bundle: " + TARGETS)
    public String targets(@Descriptor("no arguments") String... words) {
        new Words(TARGETS, Set.of(), words).atMost(0);
        return Render.targets(manager.targetTypes());
    }

    private DeviceDefinition definition(DeviceInfo d) {
        if (manager instanceof DeviceManagerImpl impl) {
            return impl.definition(d.name());
        }
        return new DeviceDefinition(d.name(), d.type(), d.arguments());
    }

    private static InvalidArgumentException unknown(String name) {
        return new InvalidArgumentException("no device named '" + name + "'; see dev:list");
    }

    private List<DeviceDefinition> definitions(String name) {
        if (manager instanceof DeviceManagerImpl impl) {
            if (name == null) {
                return impl.definitions();
            }
            manager.info(name).orElseThrow(() -> unknown(name));
            return List.of(impl.definition(name));
        }
        return (name == null ? manager.list() : List.of(manager.info(name).orElseThrow(() -> unknown(name)))).stream()
                .map(d -> new DeviceDefinition(d.name(), d.type(), d.arguments())).toList();
    }
}
