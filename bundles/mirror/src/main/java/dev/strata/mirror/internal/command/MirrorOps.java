package dev.strata.mirror.internal.command;

import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceManager;
import dev.strata.api.InvalidArgumentException;
import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * What the {@code mirror:} commands do, through the {@link DeviceManager} only: the mirror's
 * {@code status()} keys and its actions ({@code resync}, {@code recover}, {@code fail}), sent as
 * one-off messages (an action is never kept in the device's definition: a kept {@code fail}
 * would fail the leg again at every start).
 */
final class MirrorOps {
    static final String TYPE = "mirror";
    private static final long POLL_MS = 200;

    private final DeviceManager manager;
    private final LongSupplier nanoTime;
    private final long stallNanos;

    MirrorOps(DeviceManager manager, LongSupplier nanoTime, long stallSeconds) {
        this.manager = manager;
        this.nanoTime = nanoTime;
        this.stallNanos = stallSeconds * 1_000_000_000L;
    }

    /** The status of one mirror; one line for a device that is missing, not a mirror, or has no target. */
    MirrorStatus status(String device) throws IOException {
        if (device == null || device.isBlank()) {
            throw new InvalidArgumentException("give a mirror device's name; mirror:status lists the mirrors");
        }
        MirrorStatus s = MirrorStatus.of(device, manager.status(device));
        String type = s.get("type");
        if (!type.equals(TYPE)) {
            throw new InvalidArgumentException(Render.notAMirror(device, type));
        }
        return s;
    }

    private MirrorStatus running(String device) throws IOException {
        MirrorStatus s = status(device);
        if (s.legs().isEmpty()) {
            String why = s.get("waiting_for").isEmpty() ? s.get("last_error") : s.get("waiting_for");
            throw new InvalidArgumentException(Render.noTarget(device, why));
        }
        return s;
    }

    /** Every mirror's block, or the line saying there is none. */
    String statusAll() throws IOException {
        List<String> blocks = new ArrayList<>();
        for (DeviceInfo d : manager.list()) {
            if (TYPE.equals(d.type())) {
                try {
                    blocks.add(Render.status(status(d.name())));
                } catch (InvalidArgumentException e) {
                    blocks.add(d.name() + "  " + e.getMessage()); // removed meanwhile
                }
            }
        }
        return blocks.isEmpty() ? Render.noMirrors() : String.join("\n\n", blocks);
    }

    /**
     * Starts a resync of the marked regions ({@code all}: of every region) and waits for it with
     * a progress line on {@code out}. An interrupt (Ctrl-C) stops the wait, not the resync.
     */
    String resync(String device, boolean all, PrintStream out) throws IOException, InterruptedException {
        MirrorStatus before = running(device);
        long done0 = before.number("resync_done");
        long bytes0 = before.number("resync_bytes");
        long start = nanoTime.getAsLong();
        manager.message(device, "resync", all ? "all" : "dirty", false);
        ProgressLine line = new ProgressLine(out);
        long lastProgress = start;
        long lastDone = -1;
        MirrorStatus s = running(device);
        try {
            while (s.resyncing()) {
                long copied = s.number("resync_done") - done0;
                long now = nanoTime.getAsLong();
                if (copied != lastDone) {
                    lastDone = copied;
                    lastProgress = now;
                } else if (now - lastProgress > stallNanos) {
                    line.end();
                    return Render.stalled(device, stallNanos / 1_000_000_000L, s.number("resync_pending"));
                }
                line.show(Render.progress(device, copied, s.number("resync_pending"), s.number("resync_bytes") - bytes0,
                        seconds(now - start)));
                Thread.sleep(POLL_MS);
                s = running(device);
            }
        } catch (InterruptedException e) {
            line.end();
            out.println(Render.stoppedWaiting(device, s.number("resync_pending")));
            out.flush();
            throw e;
        }
        line.end();
        return Render.resynced(device, s.number("resync_done") - done0, s.number("resync_bytes") - bytes0,
                seconds(nanoTime.getAsLong() - start), s.legsIn("out_of_sync"));
    }

    String recover(String device, String leg) throws IOException {
        running(device);
        manager.message(device, "recover", leg, false);
        MirrorStatus s = status(device);
        return Render.recovering(device, legName(s, leg), s.number("resync_pending"), s.legsIn("in_sync"));
    }

    String fail(String device, String leg) throws IOException {
        running(device);
        manager.message(device, "fail", leg, false);
        MirrorStatus s = status(device);
        return Render.failed(device, legName(s, leg), s.legsIn("in_sync"));
    }

    /** The leg's name when it was given by its index in {@code legs=}. */
    private static String legName(MirrorStatus s, String leg) {
        if (s.legs().containsKey(leg)) {
            return leg;
        }
        try {
            return new ArrayList<>(s.legs().keySet()).get(Integer.parseInt(leg.trim()));
        } catch (RuntimeException e) {
            return leg;
        }
    }

    private static double seconds(long nanos) {
        return nanos / 1e9;
    }

    /** A line rewritten in place ({@code \r}), padded over a longer previous one. */
    static final class ProgressLine {
        private final PrintStream out;
        private int width;
        private boolean printed;

        ProgressLine(PrintStream out) {
            this.out = out;
        }

        void show(String line) {
            out.print("\r" + line + " ".repeat(Math.max(0, width - line.length())));
            out.flush();
            width = line.length();
            printed = true;
        }

        void end() {
            if (printed) {
                out.println();
                out.flush();
                printed = false;
            }
        }
    }
}
