package dev.strata.cache.commands.internal;

import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.framework.Bundle;
import org.osgi.framework.ServiceReference;
import org.osgi.service.component.annotations.CollectionType;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;

import dev.strata.api.DeviceManager;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.WritebackController;

/**
 * The {@code cache:} Gogo commands, for every cache policy: they parse, call {@link CacheOps}
 * (which reaches the target only through the cache API) and return the text {@link Render} makes.
 * Each command also has an overload without its arguments that answers with its usage, so a
 * missing argument gets one line saying what to type instead of Gogo's coercion error.
 */
@Component(service = CacheCommands.class, property = {"osgi.command.scope=cache", "osgi.command.function=stats",
        "osgi.command.function=set", "osgi.command.function=writeback", "osgi.command.function=detach",
        "osgi.command.function=mode", "osgi.command.function=controllers",
        "osgi.command.function=attach", "osgi.command.function=switch", "osgi.command.function=resize"})
public final class CacheCommands {

    @Reference
    DeviceManager manager;

    /** The controllers installed now; their references only (the commands never call them). */
    @Reference(service = WritebackController.class, cardinality = ReferenceCardinality.MULTIPLE,
            policy = ReferencePolicy.DYNAMIC, collectionType = CollectionType.REFERENCE)
    volatile List<ServiceReference<WritebackController>> controllers = List.of();

    /** The detaches running, for {@code --cancel} from another console. */
    final Detaches detaches = new Detaches();
    /** The switches running, for {@code cache:switch --cancel}. */
    final Detaches switches = new Detaches("switch");
    /** The resizes running, for {@code cache:resize --cancel}. */
    final Detaches resizes = new Detaches("resize");

    public CacheCommands() {
    }

    /** For tests. */
    CacheCommands(DeviceManager manager) {
        this.manager = manager;
    }

    private CacheOps ops() {
        return new CacheOps(manager, System::nanoTime);
    }

    /** As {@link #ops()}, its progress lines drawn for the session's output (a terminal or not). */
    private CacheOps ops(CommandSession session) {
        return new CacheOps(manager, System::nanoTime, ProgressLine.isTerminal(session));
    }

    private static PrintStream out(CommandSession session) {
        PrintStream console = session == null ? null : session.getConsole();
        return console != null ? console : System.out;
    }

    @Descriptor("show a cache device: a one-line summary (mode, used, dirty, hit ratio, writeback, p99 latency)")
    public String stats(
            @Descriptor("show every counter and tunable, grouped")
            @Parameter(names = "--all", presentValue = "true", absentValue = "false") boolean all,
            @Descriptor("sizes as raw numbers instead of KiB, MiB, …")
            @Parameter(names = "--bytes", presentValue = "true", absentValue = "false") boolean bytes,
            @Descriptor("cache device name") String device) throws IOException, InterruptedException {
        CacheStatus s = ops().status(device);
        return (all ? Render.all(s, bytes) : Render.summary(s, bytes)).stripTrailing();
    }

    @Descriptor("show a cache device (usage)")
    public String stats(
            @Descriptor("show every counter and tunable, grouped")
            @Parameter(names = "--all", presentValue = "true", absentValue = "false") boolean all,
            @Descriptor("sizes as raw numbers")
            @Parameter(names = "--bytes", presentValue = "true", absentValue = "false") boolean bytes) {
        throw new InvalidArgumentException(Render.statsUsage());
    }

    @Descriptor("set a tunable of a cache device: cache:set DEV KEY VALUE or cache:set DEV KEY=VALUE; kept across restart and reload")
    public String set(
            @Descriptor("a one-off: not kept in the device's definition (lost on restart or reload)")
            @Parameter(names = "--transient", presentValue = "true", absentValue = "false") boolean oneOff,
            @Descriptor("DEV KEY VALUE, or DEV KEY=VALUE") String... args) throws IOException, InterruptedException {
        String[] kv = keyValue(args);
        String done = ops().set(kv[0], kv[1], kv[2], !oneOff);
        return done + Render.controllerNote(kv[1], kv[2], installedControllers());
    }

    private java.util.Set<String> installedControllers() {
        java.util.Set<String> names = new java.util.TreeSet<>();
        for (ServiceReference<WritebackController> ref : controllers) {
            Object name = ref.getProperty(WritebackController.NAME);
            if (name != null) {
                names.add(name.toString());
            }
        }
        return names;
    }

    /** {@code DEV KEY VALUE} or {@code DEV KEY=VALUE} as {device, key, value}; a mistake names the word. */
    static String[] keyValue(String... args) {
        if (args == null || args.length == 0) {
            throw new InvalidArgumentException(Render.setUsage());
        }
        Words words = new Words("cache:set", Render.SET);
        for (String a : args) {
            if (a.startsWith("--")) {
                throw words.wrong("unknown option " + a);
            }
        }
        if (args.length == 2 && args[1].indexOf('=') > 0) {
            int eq = args[1].indexOf('=');
            return new String[] {args[0], args[1].substring(0, eq), args[1].substring(eq + 1)};
        }
        if (args.length > 3) {
            throw words.wrong("unexpected \"" + args[3] + "\"");
        }
        if (args.length < 3) {
            throw words.wrong(args.length == 1 ? "missing KEY VALUE (or KEY=VALUE)" : "missing VALUE");
        }
        if (args[1].isBlank() || args[0].contains("=")) {
            throw words.wrong("unexpected \"" + (args[0].contains("=") ? args[0] : args[1]) + "\"");
        }
        return args.clone();
    }

    @Descriptor("write back every dirty block of a cache device, with a progress line; Ctrl-C stops it (nothing is lost)")
    public String writeback(CommandSession session, @Descriptor("cache device name") String device) throws IOException, InterruptedException {
        return BoundedCancel.run(device, "writeback", "", out(session), out -> ops(session).writeback(device, out));
    }

    @Descriptor("write back every dirty block (usage)")
    public String writeback() {
        throw new InvalidArgumentException(Render.writebackUsage());
    }

    @Descriptor("remove a cache: stop caching writes, write back everything while I/O continues (progress, ETA; "
            + "Ctrl-C or cache:detach --cancel DEV keeps the cache), then swap in one short pause: a cache that "
            + "cache:attach put there gives DEV its old target back, any other leaves DEV linear over its backing device")
    public String detach(CommandSession session,
            @Descriptor("do not invalidate the cache device's copies (only for a cache cache:attach put there)")
            @Parameter(names = "--keep-cache", presentValue = "true", absentValue = "false") boolean keepCache,
            @Descriptor("stop the cache:detach of DEV running on another console; the cache stays as it was")
            @Parameter(names = "--cancel", presentValue = "true", absentValue = "false") boolean cancel,
            @Descriptor("cache device name") String device) throws IOException, InterruptedException {
        if (cancel) {
            if (keepCache) {
                throw new InvalidArgumentException("--cancel and --keep-cache do not go together; " + Render.detachUsage());
            }
            return detaches.cancel(device);
        }
        try (Detaches.Run run = detaches.begin(device)) {
            return ops(session).detach(device, out(session), keepCache, run);
        }
    }

    @Descriptor("remove a cache (usage)")
    public String detach(
            @Descriptor("do not invalidate the cache device's copies")
            @Parameter(names = "--keep-cache", presentValue = "true", absentValue = "false") boolean keepCache,
            @Descriptor("stop a running cache:detach")
            @Parameter(names = "--cancel", presentValue = "true", absentValue = "false") boolean cancel) {
        throw new InvalidArgumentException(Render.detachUsage());
    }

    @Descriptor("put a cache in front of a live device under its own name: DEV's current target moves to a new "
            + "lower device (DEV.TYPE, or --lower NAME), the cache takes DEV's place in one short pause; exports and "
            + "devices stacked on DEV are untouched")
    public String attach(
            @Descriptor("name of the new lower device that takes over DEV's current target (default DEV.OLDTYPE)")
            @Parameter(names = "--lower", absentValue = "") String lower,
            @Descriptor("DEV TYPE cache=CDEV [key=value…]") String... words) throws IOException {
        if (words == null || words.length == 0) {
            throw new InvalidArgumentException(Render.attachUsage());
        }
        Words.Parsed p = new Words("cache:attach", Render.ATTACH).parse(words, List.of("DEV", "TYPE"), true);
        return ops().attach(p.positional().get(0), p.positional().get(1), p.args(), lower.isBlank() ? null : lower);
    }

    @Descriptor("switch a cache to another policy (or cache device, or arguments) over the same backing device, live: "
            + "the old cache drains first when the new one cannot adopt its data (progress, ETA; Ctrl-C or "
            + "cache:switch --cancel DEV keeps it as it was), then the new one takes over in one short pause")
    public String _switch(CommandSession session,
            @Descriptor("stop the cache:switch of DEV running on another console; the cache stays as it was")
            @Parameter(names = "--cancel", presentValue = "true", absentValue = "false") boolean cancel,
            @Descriptor("DEV TYPE [cache=CDEV] [key=value…], or --cancel DEV") String... words)
            throws IOException, InterruptedException {
        if (words == null || words.length == 0) {
            throw new InvalidArgumentException(Render.switchUsage());
        }
        Words parser = new Words("cache:switch", Render.SWITCH);
        if (cancel) {
            return switches.cancel(parser.parse(words, List.of("DEV"), false).positional().get(0));
        }
        Words.Parsed p = parser.parse(words, List.of("DEV", "TYPE"), true);
        String device = p.positional().get(0);
        CacheOps ops = ops(session);
        try (Detaches.Run run = switches.begin(device)) {
            return new SwitchOp(manager, ops).run(device, p.positional().get(1), p.args(), out(session), run);
        }
    }

    @Descriptor("lay a cache out again over SIZE bytes of its own cache device (default: all of it, after the device "
            + "grew), live: dirty blocks written back first (progress, ETA; Ctrl-C or cache:resize --cancel DEV keeps "
            + "the cache as it was), then the new layout takes over in one short pause; the cached copies are dropped")
    public String resize(CommandSession session,
            @Descriptor("stop the cache:resize of DEV running on another console; the cache stays as it was")
            @Parameter(names = "--cancel", presentValue = "true", absentValue = "false") boolean cancel,
            @Descriptor("DEV [size=SIZE], or --cancel DEV") String... words) throws IOException, InterruptedException {
        if (words == null || words.length == 0) {
            throw new InvalidArgumentException(Render.resizeUsage());
        }
        Words parser = new Words("cache:resize", Render.RESIZE);
        Words.Parsed p = parser.parse(words, List.of("DEV"), !cancel);
        String device = p.positional().get(0);
        if (cancel) {
            return resizes.cancel(device);
        }
        parser.only(p.args(), java.util.Set.of(ResizeOp.SIZE));
        CacheOps ops = ops(session);
        try (Detaches.Run run = resizes.begin(device)) {
            return new ResizeOp(manager, ops).run(device, p.args(), out(session), run);
        }
    }

    @Descriptor("switch a cache's mode; to a mode that holds no dirty data it writes back first (progress; Ctrl-C keeps the old mode)")
    public String mode(CommandSession session, @Descriptor("cache device name") String device,
            @Descriptor("writeback, writethrough, writearound or passthrough") String mode) throws IOException, InterruptedException {
        return BoundedCancel.run(device, "mode change", "; the old mode comes back when it stops", out(session),
                out -> ops(session).mode(device, mode, out));
    }

    @Descriptor("show a cache's mode and the modes it supports")
    public String mode(@Descriptor("cache device name") String device) throws IOException, InterruptedException {
        return ops().mode(device);
    }

    @Descriptor("show or switch a cache's mode (usage)")
    public String mode() {
        throw new InvalidArgumentException(Render.modeUsage());
    }

    @Descriptor("list the writeback controllers installed (services with strata.controller), with bundle and version")
    public String controllers() {
        List<Render.Controller> list = new ArrayList<>();
        for (ServiceReference<WritebackController> ref : controllers) {
            Object name = ref.getProperty(WritebackController.NAME);
            Bundle b = ref.getBundle();
            if (name == null || b == null) {
                continue; // unnamed (no cache can bind it) or unregistered meanwhile
            }
            list.add(new Render.Controller(name.toString(), b.getSymbolicName(), b.getVersion().toString()));
        }
        list.sort(Comparator.comparing(Render.Controller::name));
        return Render.controllers(list).stripTrailing();
    }
}
