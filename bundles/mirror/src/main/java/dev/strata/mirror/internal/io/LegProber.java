package dev.strata.mirror.internal.io;

import dev.strata.api.InvalidArgumentException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntConsumer;
import java.util.function.IntPredicate;

/**
 * Brings remote legs back by themselves. A short network blip never reaches the mirror: the
 * {@code nbd} target retries its requests across reconnects until its own {@code timeout}. A
 * longer outage fails the leg's requests and the mirror degrades; then this prober reads one
 * block of the leg every interval, and once the read succeeds (the nbd target reconnected) it
 * recovers the leg as {@code recover LEG} does: only the marked regions — what the leg missed —
 * are copied to it.
 *
 * <p>A leg that fails again before it is back in sync waits twice as long before the next try
 * (up to 64 intervals), so a server that answers reads but fails writes does not make the leg
 * flap every second; the wait is reset once the leg is in sync.
 *
 * <p>Probes run on the prober's own thread: a probe of an unreachable server blocks for the nbd
 * target's timeout, which must hold up neither resync nor clears (the mirror's daemon).
 */
final class LegProber implements Runnable {
    private static final int MAX_BACKOFF_SHIFT = 6;
    private final Legs legs;
    private final IntPredicate remote;
    /** The legs found remote when last asked (status). */
    private volatile int known;
    private final long intervalMillis;
    private final IntConsumer recover;
    private final int probeBytes;
    private final long[] nextTry;
    private final int[] attempts;
    private final Thread thread;
    private volatile boolean stopped;
    private volatile long recoveries;

    LegProber(String mirror, Legs legs, IntPredicate remote, long intervalMillis, IntConsumer recover, int probeBytes) {
        this.legs = legs;
        this.remote = remote;
        this.intervalMillis = Math.max(1, intervalMillis);
        this.recover = recover;
        this.probeBytes = probeBytes;
        this.nextTry = new long[legs.count()];
        this.attempts = new int[legs.count()];
        this.thread = new Thread(this, "mirror-" + mirror + "-prober");
        thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    /** Stops the thread; a probe under way is interrupted (the nbd target's reconnect wait ends). */
    void stop() {
        stopped = true;
        boolean interrupted = false;
        while (thread.isAlive()) {
            thread.interrupt();
            try {
                thread.join(1000);
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    long recoveries() {
        return recoveries;
    }

    /** The legs found remote, by name, for status ("" until the prober has asked). */
    String describe() {
        List<String> names = new ArrayList<>();
        int k = known;
        for (int i = 0; i < legs.count(); i++) {
            if ((k & (1 << i)) != 0) {
                names.add(legs.name(i));
            }
        }
        return String.join(",", names);
    }

    /** Asks which legs are remote now (at start, for status; the legs' types rarely change). */
    void survey() {
        int k = 0;
        for (int leg = 0; leg < legs.count(); leg++) {
            k |= remote.test(leg) ? 1 << leg : 0;
        }
        known = k;
    }

    private boolean isRemote(int leg) {
        boolean r = remote.test(leg);
        known = r ? known | (1 << leg) : known & ~(1 << leg);
        return r;
    }

    /** Probes each remote leg that is out of sync and due; returns how many it recovered. */
    synchronized int runOnce(long nowMillis) {
        int n = 0;
        for (int leg = 0; leg < legs.count(); leg++) {
            Legs.State s = legs.state(leg);
            if (s == Legs.State.IN_SYNC) {
                attempts[leg] = 0;
                continue;
            }
            if (s != Legs.State.OUT_OF_SYNC || nowMillis < nextTry[leg]) {
                continue;
            }
            if (!isRemote(leg)) {
                nextTry[leg] = nowMillis + intervalMillis; // asked again later: a reload may make it one
                continue;
            }
            if (!probe(leg)) {
                nextTry[leg] = nowMillis + intervalMillis;
                continue;
            }
            try {
                recover.accept(leg);
                recoveries++;
                n++;
            } catch (InvalidArgumentException e) {
                // recovered by hand meanwhile
            }
            attempts[leg] = Math.min(MAX_BACKOFF_SHIFT, attempts[leg] + 1);
            nextTry[leg] = nowMillis + (intervalMillis << attempts[leg]);
        }
        return n;
    }

    private boolean probe(int leg) {
        try {
            legs.device(leg).read(0, ByteBuffer.allocate(probeBytes));
            return true;
        } catch (IOException | RuntimeException e) {
            return false; // still away; tried again after the interval
        }
    }

    @Override
    public void run() {
        survey();
        while (!stopped) {
            runOnce(System.nanoTime() / 1_000_000L);
            try {
                Thread.sleep(Math.min(intervalMillis, 250));
            } catch (InterruptedException e) {
                if (stopped) {
                    return;
                }
            }
        }
    }
}
