package dev.strata.mirror.internal.command;

import dev.strata.api.DeviceManager;
import dev.strata.api.InvalidArgumentException;
import java.io.IOException;
import java.io.PrintStream;
import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The {@code mirror:} Gogo commands: parse, call {@link MirrorOps}, return {@link Render}'s text.
 * Each command has overloads with fewer words that answer with its usage, so a missing word gets
 * one line saying what to type rather than Gogo's coercion error.
 */
@Component(service = MirrorCommands.class, property = {"osgi.command.scope=mirror", "osgi.command.function=status",
        "osgi.command.function=resync", "osgi.command.function=recover", "osgi.command.function=fail"})
public final class MirrorCommands {
    /** How long {@code mirror:resync} waits without a region copied before it stops waiting. */
    static final long STALL_SECONDS = 120;

    @Reference
    DeviceManager manager;

    public MirrorCommands() {
    }

    /** For tests. */
    MirrorCommands(DeviceManager manager) {
        this.manager = manager;
    }

    private MirrorOps ops() {
        return new MirrorOps(manager, System::nanoTime, STALL_SECONDS);
    }

    private static PrintStream out(CommandSession session) {
        PrintStream console = session == null ? null : session.getConsole();
        return console != null ? console : System.out;
    }

    @Descriptor("show every mirror: legs and their states, dirty regions, resync progress, log round trips per flush and per write")
    public String status() throws IOException {
        return ops().statusAll();
    }

    @Descriptor("show a mirror: legs and their states, dirty regions, resync progress, log round trips per flush and per write")
    public String status(@Descriptor("mirror device name") String device) throws IOException {
        return Render.status(ops().status(device));
    }

    @Descriptor("copy the marked regions again from the first in-sync leg to the others, with a progress line; "
            + "Ctrl-C stops waiting (the resync goes on)")
    public String resync(CommandSession session,
            @Descriptor("copy every region, not only the marked ones (legs suspected to differ)")
            @Parameter(names = "--all", presentValue = "true", absentValue = "false") boolean all,
            @Descriptor("mirror device name") String device) throws IOException, InterruptedException {
        return ops().resync(device, all, out(session));
    }

    @Descriptor("resync a mirror (usage)")
    public String resync(
            @Descriptor("copy every region")
            @Parameter(names = "--all", presentValue = "true", absentValue = "false") boolean all) {
        throw new InvalidArgumentException(Render.RESYNC_USAGE);
    }

    @Descriptor("bring an out-of-sync leg back: it receives writes at once and gets only the regions it missed, in the background")
    public String recover(@Descriptor("mirror device name") String device,
            @Descriptor("leg device name (or its index in legs=)") String leg) throws IOException {
        return ops().recover(device, leg);
    }

    @Descriptor("bring a leg back (usage)")
    public String recover(@Descriptor("mirror device name") String device) {
        throw new InvalidArgumentException(Render.RECOVER_USAGE);
    }

    @Descriptor("bring a leg back (usage)")
    public String recover() {
        throw new InvalidArgumentException(Render.RECOVER_USAGE);
    }

    @Descriptor("take a leg out of sync by hand (e.g. before replacing its disk); the last in-sync leg cannot be failed")
    public String fail(@Descriptor("mirror device name") String device,
            @Descriptor("leg device name (or its index in legs=)") String leg) throws IOException {
        return ops().fail(device, leg);
    }

    @Descriptor("take a leg out (usage)")
    public String fail(@Descriptor("mirror device name") String device) {
        throw new InvalidArgumentException(Render.FAIL_USAGE);
    }

    @Descriptor("take a leg out (usage)")
    public String fail() {
        throw new InvalidArgumentException(Render.FAIL_USAGE);
    }
}
