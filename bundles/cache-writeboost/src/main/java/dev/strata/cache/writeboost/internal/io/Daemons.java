package dev.strata.cache.writeboost.internal.io;

import dev.strata.cache.support.daemon.Daemon;
import java.util.ArrayList;
import java.util.List;

/**
 * The threads that run a cache's tasks: the flushers, writeback, the record updater, the data sync
 * and the read-cache injector, each a {@link Daemon} driving its part's {@code runOnce()}. Which of
 * them start is the {@link WriteboostCache.Options}' choice (tests turn the background ones off
 * and drive the tasks themselves); the flushers always run, since every FLUSH waits for them.
 */
final class Daemons {
    /** The flusher threads (see {@link WriteboostCache.Options#flushers()}): each runs the same task; their writes complete in order. */
    private final Daemon[] flushers;
    private final Daemon writeback;
    private final Daemon recordUpdater;
    private final Daemon dataSync;
    private final Daemon injector;
    private final WriteboostCache.Options options;
    private final LogState log;
    private final Parts parts;

    /** Builds the threads (none started) for the cache whose device is named {@code device}. */
    Daemons(Parts parts, String device, WriteboostCache.Options options) {
        this.options = options;
        this.log = parts.log;
        this.parts = parts;
        String prefix = "strata-writeboost-" + device + "-";
        flushers = new Daemon[Math.max(1, options.flushers())];
        for (int i = 0; i < flushers.length; i++) {
            flushers[i] = new Daemon(prefix + "flusher" + (i == 0 ? "" : "-" + (i + 1)), parts.flusher::flusherRunOnce,
                    log.lock, log.queued, 1000, () -> log.queuedEvents);
        }
        writeback = new Daemon(prefix + "writeback", parts.writeback::writebackRunOnce, log.lock, log.changed, 100,
                () -> log.events);
        recordUpdater = new Daemon(prefix + "record", parts.record::recordUpdaterRunOnce, log.lock, log.changed, 1000,
                () -> log.events);
        dataSync = new Daemon(prefix + "sync", parts.sync::syncRunOnce, log.lock, log.changed, 1000, () -> log.events);
        injector = new Daemon(prefix + "readcache", parts.injector::injectorRunOnce, log.lock, log.injectWake, 1000);
    }

    /** Starts the flushers and the background tasks the options ask for. */
    void start() {
        log.stopWriteback = false;
        for (Daemon f : flushers) {
            f.start();
        }
        if (options.backgroundWriteback()) {
            writeback.start();
        }
        if (options.backgroundRecordUpdates()) {
            recordUpdater.start();
        }
        if (options.backgroundSync()) {
            dataSync.start();
        }
        if (options.backgroundReadCache()) {
            injector.start();
        }
    }

    /** Stops every task but the flushers ({@code alsoFlushers}: those too). */
    void stop(boolean alsoFlushers) {
        parts.injector.stopInjector();
        dataSync.stop();
        recordUpdater.stop();
        // prompt stop: the batch in flight ends at its next backing write, whatever the backing
        // device's speed (its blocks stay dirty and are written back after the next start)
        log.stopWriteback = true;
        writeback.stop();
        if (alsoFlushers) {
            stopFlushers();
        }
    }

    void stopFlushers() {
        for (Daemon f : flushers) {
            f.stop();
        }
    }

    /** The writeback thread ({@code writeback=all} waits for it when it runs). */
    Daemon writeback() {
        return writeback;
    }

    /** The read-cache injector's thread. */
    Daemon injector() {
        return injector;
    }

    /** Names of the threads running now. */
    List<String> running() {
        List<Daemon> all = new ArrayList<>(List.of(flushers));
        all.addAll(List.of(writeback, recordUpdater, dataSync, injector));
        List<String> names = new ArrayList<>();
        for (Daemon d : all) {
            if (d.running()) {
                names.add(d.name());
            }
        }
        return names;
    }
}
