package dev.strata.core.internal.command;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import org.apache.felix.service.command.Descriptor;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceManager;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.TargetArguments;
import dev.strata.core.internal.DeviceDefinition;
import dev.strata.core.internal.DeviceManagerImpl;

/** The {@code dev:} Gogo commands: parse, delegate to the manager, render. */
@Component(service = DeviceCommands.class, property = {
        "osgi.command.scope=dev",
        "osgi.command.function=create", "osgi.command.function=list", "osgi.command.function=info",
        "osgi.command.function=status", "osgi.command.function=table", "osgi.command.function=message",
        "osgi.command.function=suspend", "osgi.command.function=resume", "osgi.command.function=reload",
        "osgi.command.function=remove", "osgi.command.function=targets"})
public final class DeviceCommands {

    @Reference
    DeviceManager manager;

    public DeviceCommands() {
    }

    /** For tests. */
    public DeviceCommands(DeviceManager manager) {
        this.manager = manager;
    }

    @Descriptor("create a device: dev:create NAME TYPE key=value… (see dev:targets for the types and their arguments)")
    public String create(@Descriptor("device name: letters, digits, '.', '_', '-'") String name,
            @Descriptor("target type, e.g. file, memory, linear") String type,
            @Descriptor("target arguments as key=value") String... args) throws IOException {
        return Render.created(manager.create(name, type, parse(args)));
    }

    @Descriptor("list the devices")
    public String list() {
        return Render.devices(manager.list());
    }

    @Descriptor("show a device: type, size, state, what it is stacked on and what uses it")
    public String info(@Descriptor("device name") String name) {
        DeviceInfo d = manager.info(name)
                .orElseThrow(() -> new InvalidArgumentException("no device named '" + name + "'; see dev:list"));
        return Render.info(d, new DeviceDefinition(d.name(), d.type(), d.arguments()));
    }

    @Descriptor("show a device's counters: its own (state, I/O counts) then its target's")
    public String status(@Descriptor("device name") String name) throws IOException {
        return Render.status(manager.status(name));
    }

    @Descriptor("print every device definition as 'name type key=value…' (lower devices first)")
    public String table() {
        return Render.definitions(definitions(null));
    }

    @Descriptor("print one device definition as 'name type key=value…'")
    public String table(@Descriptor("device name") String name) {
        return Render.definitions(definitions(name));
    }

    @Descriptor("send a tunable or an action to a device's target")
    public String message(@Descriptor("device name") String name, @Descriptor("tunable or action") String key,
            @Descriptor("value") String value) throws IOException {
        manager.message(name, key, value);
        return name + ": " + key + "=" + value + "\n";
    }

    @Descriptor("suspend a device: new I/O waits, in-flight I/O drains, the target makes everything durable")
    public String suspend(@Descriptor("device name") String name) throws IOException {
        manager.suspend(name);
        return "suspended " + name + "\n";
    }

    @Descriptor("resume a suspended device: waiting I/O proceeds")
    public String resume(@Descriptor("device name") String name) throws IOException {
        manager.resume(name);
        return "resumed " + name + "\n";
    }

    @Descriptor("replace a device's target under a short suspend: dev:reload NAME TYPE key=value…")
    public String reload(@Descriptor("device name") String name, @Descriptor("new target type") String type,
            @Descriptor("new target arguments as key=value") String... args) throws IOException {
        return Render.reloaded(manager.reload(name, type, parse(args)));
    }

    @Descriptor("remove a device (refused while a device above or an export uses it); its data stays on disk")
    public String remove(@Descriptor("device name") String name) throws IOException {
        manager.remove(name);
        return "removed " + name + "\n";
    }

    @Descriptor("list the available target types with their arguments and providing bundle")
    public String targets() {
        return Render.targets(manager.targetTypes());
    }

    private List<DeviceDefinition> definitions(String name) {
        if (manager instanceof DeviceManagerImpl impl) {
            if (name == null) {
                return impl.definitions();
            }
            manager.info(name).orElseThrow(() -> new InvalidArgumentException("no device named '" + name + "'; see dev:list"));
            return List.of(impl.definition(name));
        }
        return (name == null ? manager.list() : List.of(manager.info(name).orElseThrow(
                () -> new InvalidArgumentException("no device named '" + name + "'; see dev:list")))).stream()
                .map(d -> new DeviceDefinition(d.name(), d.type(), d.arguments())).toList();
    }

    static Map<String, String> parse(String... args) {
        return TargetArguments.parse(Arrays.asList(args == null ? new String[0] : args));
    }
}
