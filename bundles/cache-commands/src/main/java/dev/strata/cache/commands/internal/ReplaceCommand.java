package dev.strata.cache.commands.internal;

import java.io.IOException;
import java.io.PrintStream;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

import dev.strata.api.CacheTarget;
import dev.strata.api.DeviceManager;
import dev.strata.api.InvalidArgumentException;

/**
 * {@code cache:replace DEV cache=NEW}: moves a live cache to another cache device without writing
 * its dirty data back ({@link DeviceManager#replace}), with a progress line; Ctrl-C or
 * {@code cache:replace --cancel DEV} from another console stops the copy and leaves the cache on
 * its old device, until the pause has begun. A component of its own (scope {@code cache}), so that
 * the other {@code cache:} commands need no change for it.
 */
@Component(service = ReplaceCommand.class, property = {"osgi.command.scope=cache", "osgi.command.function=replace"})
public final class ReplaceCommand {

    @Reference
    DeviceManager manager;

    private final Map<String, Run> runs = new ConcurrentHashMap<>();
    private final LongSupplier nanoTime;

    public ReplaceCommand() {
        this(null, System::nanoTime);
    }

    /** For tests. */
    ReplaceCommand(DeviceManager manager, LongSupplier nanoTime) {
        this.manager = manager;
        this.nanoTime = nanoTime;
    }

    @Descriptor("move a cache to another cache device without writing its dirty data back: the cache device is "
            + "copied while I/O continues (progress; Ctrl-C or cache:replace --cancel DEV keeps the old one), then the "
            + "target switches to the copy in one short pause; the old cache device is left blank")
    public String replace(CommandSession session,
            @Descriptor("stop the cache:replace of DEV running on another console; the cache stays where it was")
            @Parameter(names = "--cancel", presentValue = "true", absentValue = "false") boolean cancel,
            @Descriptor("DEV cache=NEWDEV (with --cancel: DEV)") String... words) throws IOException, InterruptedException {
        if (words == null || words.length == 0) {
            throw new InvalidArgumentException(usage());
        }
        Words parser = new Words("cache:replace", Render.REPLACE);
        Words.Parsed p = parser.parse(words, java.util.List.of("DEV"), !cancel);
        String device = p.positional().get(0);
        if (cancel) {
            return cancel(device);
        }
        String[] current = manager.withTarget(device, CacheTarget.class,
                c -> new String[] {c.cacheDeviceArgument(), String.valueOf(c.dirtyBlocks())});
        String key = current[0];
        parser.only(p.args(), java.util.Set.of(key)); // the one argument: the new cache device, by the cache's own key
        parser.require(p.args(), key, "NEWDEV");
        String target = p.args().get(key);
        String oldCache = manager.info(device).map(i -> i.arguments().get(key)).orElse("?");
        PrintStream out = out(session);
        Run run = new Run(device, out, ProgressLine.isTerminal(session));
        if (runs.putIfAbsent(device, run) != null) {
            throw new InvalidArgumentException(device + ": a cache:replace is already running; wait for it or cancel it");
        }
        long start = nanoTime.getAsLong();
        try {
            replaceAndShow(device, target, run);
            run.end();
            String pause = manager.status(device).getOrDefault("last_swap_pause_us", null);
            String report = replaced(device, oldCache, target, run.copied, run.pass, nanoTime.getAsLong() - start, pause);
            if (run.unanswered()) {
                // Ctrl-C came once the pause had begun (too late: the replace completed); Gogo drops
                // the result of the job it interrupted, so without this line the user would not learn
                // that the cache moved
                out.println(device + ": too late to cancel (the pause had begun): " + report.substring(device.length() + 2));
                out.flush();
            }
            return report;
        } catch (InterruptedException e) {
            run.end();
            out.println(device + ": replace cancelled after copying " + Render.size(run.copied) + "; the cache stays on "
                    + oldCache + " (" + target + " is left blank)");
            out.flush();
            throw e;
        } catch (IOException | RuntimeException e) {
            run.end();
            if (run.unanswered()) {
                // as above: after Ctrl-C a failure would be dropped unseen
                out.println(e.getMessage() != null ? e.getMessage() : device + ": cache:replace failed");
                out.flush();
            }
            throw e;
        } finally {
            runs.remove(device, run);
            if (run.cancelled) {
                Thread.interrupted(); // handled; must not hit the next command
            }
        }
    }

    /**
     * Runs the replace on a thread of its own and draws its progress line here: the manager reports
     * progress from its copy thread, and Gogo's console stream belongs to the session's thread. An
     * interrupt of this thread (Ctrl-C, --cancel) is passed on to the replace, which takes it as a cancel.
     */
    private void replaceAndShow(String device, String target, Run run) throws IOException, InterruptedException {
        java.util.concurrent.FutureTask<Void> task = new java.util.concurrent.FutureTask<>(() -> {
            manager.replace(device, target, run::record);
            return null;
        });
        // no inherited thread locals: Gogo's per-thread console streams are inheritable, and a
        // thread printing (a log line) into the session's pipe from outside it loops until the stack overflows
        Thread t = new Thread(null, task, "cache-replace-" + device, 0, false);
        t.setDaemon(true);
        t.start();
        boolean interrupted = false;
        try {
            for (;;) {
                try {
                    task.get(250, java.util.concurrent.TimeUnit.MILLISECONDS);
                    return;
                } catch (java.util.concurrent.TimeoutException e) {
                    run.draw();
                } catch (InterruptedException e) {
                    interrupted = true;
                    run.interrupted = true;
                    t.interrupt();
                } catch (java.util.concurrent.ExecutionException e) {
                    Throwable c = e.getCause();
                    if (c instanceof InterruptedException ie) {
                        interrupted = false; // taken as the cancel it was
                        throw ie;
                    }
                    if (c instanceof IOException io) {
                        throw io;
                    }
                    if (c instanceof RuntimeException r) {
                        throw r;
                    }
                    throw new IOException(device + ": cache:replace failed: " + c, c);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Descriptor("move a cache to another cache device (usage)")
    public String replace(
            @Descriptor("stop a running cache:replace")
            @Parameter(names = "--cancel", presentValue = "true", absentValue = "false") boolean cancel) {
        throw new InvalidArgumentException(usage());
    }

    private String cancel(String device) {
        Run r = runs.get(device);
        if (r == null) {
            throw new InvalidArgumentException(device + ": no cache:replace is running; nothing to cancel");
        }
        return r.cancel();
    }

    static String usage() {
        return "usage: cache:replace DEV cache=NEWDEV (copies the cache to NEWDEV while I/O runs, then switches in one "
                + "short pause; nothing is written back), cache:replace --cancel DEV";
    }

    static String replaced(String device, String from, String to, long copied, int passes, long nanos, String pauseMicros) {
        String pause = "";
        if (pauseMicros != null) {
            long us = Long.parseLong(pauseMicros);
            pause = "; I/O paused " + (us < 1000 ? us + " µs" : String.format(Locale.ROOT, "%.1f ms", us / 1000.0));
        }
        return device + ": cache moved from " + from + " to " + to + " (" + Render.size(copied) + " copied in "
                + passes + (passes == 1 ? " pass" : " passes") + ", " + seconds(nanos) + ", nothing written back; " + from
                + " is blank now)" + pause;
    }

    private static String seconds(long nanos) {
        return String.format(Locale.ROOT, "%.1f s", nanos / 1e9);
    }

    private static PrintStream out(CommandSession session) {
        PrintStream console = session == null ? null : session.getConsole();
        return console != null ? console : System.out;
    }

    /** One replace: its thread (for --cancel), the progress line, and whether the pause began. */
    private final class Run {
        private final String device;
        private final PrintStream out;
        private final Thread thread = Thread.currentThread();
        private final long start = nanoTime.getAsLong();
        private boolean pausing;
        private boolean cancelled;
        /** An interrupt (Ctrl-C or --cancel) reached the command and was passed on to the replace. */
        volatile boolean interrupted;
        private boolean printed;
        private int width;
        long copied;
        int pass;

        /** Not a terminal: a whole line every {@link ProgressLine#LINE_EVERY_NANOS}, none at the end. */
        private final boolean terminal;
        private long lastLine = start;

        Run(String device, PrintStream out, boolean terminal) {
            this.device = device;
            this.out = out;
            this.terminal = terminal;
        }

        private long left;
        private int shownPass = -1;

        /** From the replace's thread: keeps the figures. */
        synchronized void record(long copiedBytes, long leftBytes, int p) {
            copied = copiedBytes;
            left = leftBytes;
            if (p == 0) {
                pausing = true;
            } else {
                pass = p;
            }
        }

        /** On the session's thread: redraws the line. */
        synchronized void draw() {
            if (pass == 0 && !pausing) {
                return; // nothing reported yet
            }
            int p = pausing ? 0 : pass;
            long copiedBytes = copied;
            long leftBytes = left;
            shownPass = p;
            double rate = copiedBytes * 1e9 / Math.max(1, nanoTime.getAsLong() - start);
            String line = "replace " + device + ": " + Render.size(copiedBytes) + " copied, " + Render.size(leftBytes)
                    + " left (" + (p == 0 ? "pausing" : "pass " + p) + "), " + Render.size((long) rate) + "/s"
                    + (p != 0 && rate > 0 && leftBytes > 0 ? ", ETA " + Math.max(1, Math.round(leftBytes / rate)) + " s" : "");
            if (!terminal) {
                long now = nanoTime.getAsLong();
                if (now - lastLine >= ProgressLine.LINE_EVERY_NANOS) {
                    out.println(line);
                    out.flush();
                    lastLine = now;
                }
                return;
            }
            out.print("\r" + line + " ".repeat(Math.max(0, width - line.length())));
            out.flush();
            width = line.length();
            printed = true;
        }

        synchronized void end() {
            if (!terminal) {
                return; // the result line follows
            }
            if (shownPass >= 0 || pass > 0) {
                draw();
            }
            if (printed) {
                out.println();
                printed = false;
            }
        }

        /**
         * Whether the command's result will be lost: an interrupt that did not come from --cancel is
         * the Gogo job's (Ctrl-C), and Gogo then drops whatever the command returns or throws; its
         * outcome must be printed. The flag covers an interrupt that came after the replace ended
         * too (a finished task's {@code get} returns without looking at it).
         */
        synchronized boolean unanswered() {
            return !cancelled && (interrupted || Thread.currentThread().isInterrupted());
        }

        synchronized String cancel() {
            if (pausing) {
                return device + ": too late to cancel: the replace is switching to the new cache device (one short pause)";
            }
            cancelled = true;
            thread.interrupt();
            return device + ": cancelling the replace (its console prints how far it got)";
        }
    }
}
