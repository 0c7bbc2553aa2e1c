package dev.strata.cache.commands.internal;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.strata.api.InvalidArgumentException;

/**
 * The {@code cache:detach} runs in progress, by device, so that {@code cache:detach --cancel DEV}
 * typed on another console can stop one: it interrupts the running command's thread (as Ctrl-C on
 * its own console does), which puts the mode back and prints how far it got. Once the run has
 * begun its swap (one short pause that commits the new definition) it can no longer be cancelled:
 * the cancel is refused with a line saying so, never half applied.
 */
final class Detaches {

    /** A phase a run reached, for tests: {@code drained} (clean, before the swap). */
    interface Hook {
        void reached(String device, String phase);
    }

    private final Map<String, Run> runs = new ConcurrentHashMap<>();
    volatile Hook hook = (device, phase) -> { };
    /** The command these runs are of ({@code detach}, {@code switch}), for its lines. */
    private final String verb;

    Detaches() {
        this("detach");
    }

    Detaches(String verb) {
        this.verb = verb;
    }

    /** One detach: its thread, and whether it was cancelled or has begun its swap. */
    final class Run implements AutoCloseable {
        private final String device;
        private final Thread thread = Thread.currentThread();
        private boolean cancelled;
        private boolean swapping;

        private Run(String device) {
            this.device = device;
        }

        void reached(String phase) {
            hook.reached(device, phase);
        }

        /** Whether a cancel came (the interrupt may have been absorbed by a call that ignored it). */
        synchronized boolean cancelled() {
            return cancelled;
        }

        /** Enters the swap unless cancelled; from then on a cancel is refused. */
        synchronized boolean beginSwap() {
            if (cancelled) {
                return false;
            }
            swapping = true;
            return true;
        }

        private synchronized String cancel() {
            if (swapping) {
                return Render.tooLateToCancel(device, verb);
            }
            cancelled = true;
            thread.interrupt();
            return Render.cancelRequested(device, verb);
        }

        @Override
        public void close() {
            runs.remove(device, this);
            if (cancelled()) {
                Thread.interrupted(); // the cancel is handled; the interrupt must not hit the next command
            }
        }
    }

    /** Registers a detach of {@code device} on the calling thread; one at a time per device. */
    Run begin(String device) {
        Run r = new Run(device);
        if (runs.putIfAbsent(device, r) != null) {
            throw new InvalidArgumentException(Render.running(device, verb));
        }
        return r;
    }

    /** {@code cache:detach --cancel DEV}. */
    String cancel(String device) {
        Run r = runs.get(device);
        if (r == null) {
            throw new InvalidArgumentException(Render.noneRunning(device, verb));
        }
        return r.cancel();
    }
}
