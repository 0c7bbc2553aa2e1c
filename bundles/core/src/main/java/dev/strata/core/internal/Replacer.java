package dev.strata.core.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.strata.api.CacheTarget;
import dev.strata.api.Claim;
import dev.strata.api.DeviceManager.ReplaceProgress;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Target;
import dev.strata.core.internal.text.Text;

/**
 * Moves a live cache to another cache device without writing its dirty data back
 * ({@link dev.strata.api.DeviceManager#replace}, {@code cache:replace DEV cache=NEW}).
 *
 * <h2>Order</h2>
 * <ol>
 * <li>Validate (nothing paused, nothing stored for a mistake); claim {@code NEW} exclusively for
 * the device.</li>
 * <li>Store the <em>journal</em>: a definition {@code DEV.replace} of type {@value #JOURNAL_TYPE},
 * staged for the device, naming both cache devices. It is never built; it only tells a restart
 * which of the two devices may hold a copy that must be made blank.</li>
 * <li>Blank {@code NEW}'s first block, start tracking the writes to {@code OLD}, copy to {@code NEW}
 * while I/O continues what the policy says is live ({@link CacheTarget#liveCacheExtents}: for a log,
 * the metadata and the used segments; the whole device when it cannot say), first block zeroed (see
 * {@link ImageCopier}), then again what was written meanwhile, until little is left.</li>
 * <li>Pause: the device's gate closes and drains; the old target is suspended (everything durable on
 * {@code OLD}); what it wrote since the last pass is copied, then {@code OLD}'s first block, and
 * {@code NEW} is flushed; the target moves onto {@code NEW} with its in-memory state
 * ({@link CacheTarget#moveCacheDevice}: nothing is recovered, so the pause does not grow with the
 * cache) — a policy that cannot move is closed and a target built over {@code NEW} instead (it
 * recovers from the copy, as after a restart); the device's definition naming {@code NEW} is stored
 * (the <b>commit</b>); the target resumes on {@code NEW}; the gate opens.</li>
 * <li>{@code OLD}'s first block is zeroed and flushed (it is blank now: nothing can reopen its
 * stale copy), the journal is deleted, {@code OLD} is released.</li>
 * </ol>
 * Not one write goes to the backing device: the targets never write back here (the old one is
 * closed, which writes nothing back; the new one starts with the dirty data the copy holds).
 *
 * <h2>Crash at any point</h2>
 * At start ({@link #recover}), before anything is built: for a journal whose device's stored
 * definition names {@code NEW}, the replace committed and {@code OLD} is to be blanked; otherwise
 * it did not, the device comes up on {@code OLD} as it was, and {@code NEW} is to be blanked. The
 * blanking happens when that device is built ({@link #built}), before anything can use it; then the
 * journal is deleted. So the cache runs on exactly one device, and the other holds no copy a later
 * open could take (a stale cache of the same backing device would be recovered and written back).
 * <p>
 * Runs under the device's {@code op} lock for its whole length (no reload, detach, attach or
 * remove of the device can interleave with the copy); {@code dev:status} (and {@code cache:stats},
 * which reads it) answers at once, from the running target.
 */
final class Replacer {
    private static final Logger LOG = LoggerFactory.getLogger(Replacer.class);
    /** The type of a journal definition (never a factory's type: it is never built). */
    static final String JOURNAL_TYPE = "cache-replace";
    static final int CHUNK = 1 << 20;
    /** Copy again while more than this is marked, before the pause (at most {@link #MAX_PASSES}). */
    static final long PAUSE_BYTES = 2L * CHUNK;
    static final int MAX_PASSES = 12;
    private final Core core;
    /** Devices to blank once built (from journals found at start), to the journal's name. */
    private final Map<String, String> pendingBlank = new ConcurrentHashMap<>();
    /**
     * A hook for tests, called with the phase reached: {@code journal}, {@code copied} (before
     * the pause; a throw takes the rollback path), {@code built} (in the pause, before the commit),
     * {@code committed}, {@code blanked} (after the commit: must not throw).
     */
    volatile Attacher.PhaseHook hook = phase -> { };

    Replacer(Core core) {
        this.core = core;
    }

    void replace(String name, String newCache, ReplaceProgress progress) throws IOException, InterruptedException {
        MappedDevice d = core.graph.require(name);
        core.operations.lockOp(d);
        try {
            String before = d.lastError;
            replaceLocked(d, newCache, progress);
            d.clearErrorNotedBefore(before);
        } finally {
            d.op.unlock();
        }
        core.reconciler.scheduleWaiting();
    }

    private void replaceLocked(MappedDevice d, String newName, ReplaceProgress progress)
            throws IOException, InterruptedException {
        if (d.removed) {
            throw DeviceGraph.unknownDevice(d.name);
        }
        if (d.userSuspended) {
            throw new InvalidArgumentException("device '" + d.name + "' is suspended; dev:resume " + d.name
                    + " first, then replace");
        }
        Target old = d.target;
        if (!(old instanceof CacheTarget cache)) {
            throw new InvalidArgumentException(old == null
                    ? "device '" + d.name + "' has no target right now (waiting for " + d.waitingFor + "); replace when it is active"
                    : "device '" + d.name + "' is a " + d.definition.type() + " device, not a cache");
        }
        String key = cache.cacheDeviceArgument();
        DeviceDefinition oldDef = d.definition;
        String oldName = key == null ? null : oldDef.arguments().get(key);
        if (oldName == null) {
            throw new InvalidArgumentException("device '" + d.name + "': its definition names no " + key
                    + "= device; nothing to replace");
        }
        if (newName.equals(oldName)) {
            throw new InvalidArgumentException(newName + " is already " + d.name + "'s cache device; name another device");
        }
        MappedDevice o = core.graph.require(oldName);
        MappedDevice n;
        List<String> oldLowers = d.lowers;
        Map<String, Claim> oldClaims = d.claims;
        synchronized (core.graph.lock) {
            core.graph.requireReadyLowerLocked(newName, d.name);
            n = core.graph.getLocked(newName);
            if (newName.equals(d.name) || core.graph.dependsOnLocked(newName, d.name)) {
                throw new InvalidArgumentException("device '" + newName + "' is stacked on '" + d.name
                        + "'; a device cannot be stacked on itself");
            }
            if (oldLowers.contains(newName)) {
                throw new InvalidArgumentException("device '" + newName + "' is already under " + d.name + " ("
                        + DeviceGraph.role(d, newName) + "); choose another device");
            }
            for (String l : oldLowers) {
                // deeper down the stack (an attached device's old storage under NAME.linear): the
                // claim check's "remove NAME.linear first" would take the device's data away
                if (core.graph.dependsOnLocked(l, newName)) {
                    throw new InvalidArgumentException("device '" + newName + "' is already under " + d.name
                            + " (it holds " + l + ", " + DeviceGraph.role(d, l) + "); the new cache device must be "
                            + "a free device: cache:replace " + d.name + " cache=<a free device of at least "
                            + Text.size(o.size) + ">");
                }
            }
            core.graph.checkClaimsLocked(d.name, Map.of(newName, Claim.EXCLUSIVE));
            if (n.size < o.size) {
                throw new InvalidArgumentException(newName + " has " + Text.size(n.size) + ", less than "
                        + oldName + " (" + Text.size(o.size) + "): cache:replace copies the cache device as "
                        + "it is (dirty and clean blocks, metadata); use a device of at least "
                        + Text.size(o.size));
            }
            if (n.blockSize > o.blockSize) {
                throw new InvalidArgumentException(newName + " has " + n.blockSize + "-byte blocks, " + oldName + " "
                        + o.blockSize + "-byte ones; the copy needs blocks no larger than the old device's");
            }
            if (d.persistent && !n.persistent) {
                throw new InvalidArgumentException(newName + " is transient (not stored); " + d.name
                        + " would lose its cache device at the next start: use a stored device");
            }
            d.lowers = DeviceGraph.union(oldLowers, List.of(newName));
            d.claims = DeviceGraph.strongest(oldClaims, Map.of(newName, Claim.EXCLUSIVE));
        }
        Map<String, String> args = new LinkedHashMap<>(oldDef.arguments());
        args.put(key, newName);
        DeviceDefinition def = new DeviceDefinition(d.name, oldDef.type(), args, oldDef.id(), oldDef.tunables(), null,
                oldDef.lowerOf());
        List<String> newLowers = new ArrayList<>();
        for (String l : oldLowers) {
            newLowers.add(l.equals(oldName) ? newName : l);
        }
        Map<String, Claim> newClaims = new LinkedHashMap<>();
        oldClaims.forEach((k, v) -> newClaims.put(k.equals(oldName) ? newName : k, v));
        Job job = new Job(d, old, o, n, key, def, newLowers, newClaims, oldLowers, oldClaims, progress);
        // the copy and the pause run on a thread of their own: an interrupt (Ctrl-C) of the caller
        // must not reach their file I/O (an interrupted FileChannel closes itself); it becomes a
        // cancel, honoured between two chunks of the copy and refused once the pause has begun
        java.util.concurrent.FutureTask<Void> task = new java.util.concurrent.FutureTask<>(() -> {
            job.run();
            return null;
        });
        // no inherited thread locals (a shell's per-thread console streams must not follow it here)
        Thread worker = new Thread(null, task, "strata-replace-" + d.name, 0, false);
        worker.setDaemon(true);
        worker.start();
        boolean tooLate = false;
        try {
            for (;;) {
                try {
                    task.get();
                    break;
                } catch (InterruptedException e) {
                    tooLate |= !job.copier.cancel();
                } catch (java.util.concurrent.ExecutionException e) {
                    Throwable c = e.getCause();
                    if (c instanceof InterruptedException ie) {
                        throw ie;
                    }
                    if (c instanceof IOException io) {
                        throw io;
                    }
                    if (c instanceof RuntimeException r) {
                        throw r;
                    }
                    throw new IOException("device '" + d.name + "': cache:replace failed: " + c, c);
                }
            }
        } finally {
            if (tooLate) {
                Thread.currentThread().interrupt(); // a cancel that came too late: the caller still sees it
            }
        }
    }

    /** One replace's state and steps, run on its own thread (see {@link #replaceLocked}). */
    private final class Job {
        final MappedDevice d;
        final Target old;
        final MappedDevice o;
        final MappedDevice n;
        final DeviceDefinition def;
        final List<String> newLowers;
        final Map<String, Claim> newClaims;
        final List<String> oldLowers;
        final Map<String, Claim> oldClaims;
        final ReplaceProgress progress;
        final MappedDevice journal;
        final DeviceDefinition journalDef;
        final WriteTracker marks;
        final ImageCopier copier;

        Job(MappedDevice d, Target old, MappedDevice o, MappedDevice n, String key, DeviceDefinition def,
                List<String> newLowers, Map<String, Claim> newClaims, List<String> oldLowers,
                Map<String, Claim> oldClaims, ReplaceProgress progress) {
            this.d = d;
            this.old = old;
            this.o = o;
            this.n = n;
            this.def = def;
            this.newLowers = newLowers;
            this.newClaims = newClaims;
            this.oldLowers = oldLowers;
            this.oldClaims = oldClaims;
            this.progress = progress == null ? (c, l, p) -> { } : progress;
            this.journal = journalDevice(d);
            this.journalDef = journal(d.name, key, o.name, n.name);
            this.marks = new WriteTracker(o.size, CHUNK);
            this.copier = new ImageCopier(o.view, n.view, marks, this.progress);
        }

        void run() throws IOException, InterruptedException {
            boolean committed = false;
            boolean journaled = false;
            try {
                if (d.persistent) {
                    core.store.save(journal, journalDef);
                    journaled = true;
                }
                hook.reached("journal");
                copier.blankHeader();
                o.tracker = marks; // first: a write from now on is copied, whether the extents below name it or not
                markLive(d, (CacheTarget) old, marks);
                copier.pass();
                while (copier.markedBytes() > PAUSE_BYTES && copier.passes() < MAX_PASSES) {
                    copier.pass();
                }
                // what the passes wrote is made durable while I/O still runs, so that the flush
                // inside the pause has little left (else it is one fdatasync of the whole copy)
                n.view.flush();
                hook.reached("copied");
                if (!copier.beginPause()) {
                    throw new InterruptedException("cache:replace cancelled");
                }
                progress.update(copier.copiedBytes(), copier.markedBytes(), 0);
                core.lifecycle.releaseHolds(d, false); // a running cache:writeback etc. must not see the swap
                long closed = System.nanoTime();
                try {
                    core.lifecycle.quiesce(d);
                } catch (IOException | RuntimeException e) {
                    d.holds.open();
                    throw e;
                }
                Target t = pause(d, (CacheTarget) old, o, n, copier, def, newLowers, oldLowers);
                committed = true;
                d.definition = def;
                synchronized (core.graph.lock) {
                    d.lowers = List.copyOf(newLowers);
                    d.claims = Map.copyOf(newClaims);
                }
                if (t == old) {
                    t = resumeMoved(d, old, def, newLowers);
                }
                if (t != null) {
                    core.lifecycle.attach(d, d.factory, t);
                }
                d.lastSwapPauseNanos = System.nanoTime() - closed;
                hook.reached("committed");
            } finally {
                o.tracker = null;
                if (!committed) {
                    synchronized (core.graph.lock) {
                        d.lowers = oldLowers;
                        d.claims = oldClaims;
                    }
                    if (journaled) {
                        deleteJournal(d.name, journal);
                    }
                }
            }
            // the old device holds a complete, soon stale, copy of the cache: blank it before it is
            // released, so no later open over the same backing device recovers it
            try {
                blank(o);
                hook.reached("blanked");
                if (journaled) {
                    deleteJournal(d.name, journal);
                }
            } catch (IOException | RuntimeException e) {
                // the journal stays: the next start blanks the old device before anything uses it
                pendingBlank.put(o.name, journalDef.name());
                LOG.warn("device {}: could not blank the old cache device {} ({}); the next start does it", d.name,
                        o.name, e.getMessage());
            }
            LOG.info("replaced the cache device of {}: {} → {}, {} bytes copied in {} passes, pause {} µs", d.name,
                    o.name, n.name, copier.copiedBytes(), copier.passes(), d.lastSwapPauseNanos / 1000);
        }
    }

    /**
     * Marks what the copy must take: the policy's live extents ({@link CacheTarget#liveCacheExtents}),
     * always the first chunk (see {@link ImageCopier}); everything when the policy cannot say.
     */
    private static void markLive(MappedDevice d, CacheTarget cache, WriteTracker marks) {
        long[] live;
        try {
            live = cache.liveCacheExtents();
        } catch (RuntimeException e) {
            LOG.warn("device {}: its cache could not say what to copy ({}); copying the whole device", d.name,
                    e.getMessage());
            live = null;
        }
        if (live == null) {
            marks.markAll();
            return;
        }
        marks.mark(0, ImageCopier.HEADER);
        for (int i = 0; i + 1 < live.length; i += 2) {
            marks.mark(live[i], live[i + 1]);
        }
    }

    /**
     * Inside the pause (gate closed and drained): suspend the old target (everything durable on the
     * old device), copy the rest, then move the target onto the copy with its in-memory state
     * ({@link CacheTarget#moveCacheDevice}) — or, for a policy that cannot, close it and build one
     * over the copy (it recovers, as after a restart) — and commit. Returns the target to attach:
     * the old one itself when it moved (still suspended: {@link #resumeMoved}). On any failure
     * before the commit {@code n} is blanked, the old target goes back to the old device as it was
     * (moved back and resumed, or rebuilt) and the gate reopens.
     */
    private Target pause(MappedDevice d, CacheTarget old, MappedDevice o, MappedDevice n, ImageCopier copier,
            DeviceDefinition def, List<String> newLowers, List<String> oldLowers) throws IOException {
        DeviceDefinition oldDef = d.definition;
        FactoryEntry entry = d.factory;
        Target t = null;
        boolean suspended = false;
        boolean moved = false;
        boolean oldClosed = false;
        try {
            long t0 = System.nanoTime();
            old.suspend(); // everything durable on the old device; what it writes meanwhile is tracked
            suspended = true;
            long t1 = System.nanoTime();
            long before = copier.copiedBytes();
            copier.finalPass();
            copier.copyHeader();
            long t2 = System.nanoTime();
            moved = old.moveCacheDevice(n.view);
            if (moved) {
                t = old;
                hook.reached("moved");
            } else {
                old.close(); // what a close writes is tracked too, and copied now
                oldClosed = true;
                copier.finalPass();
                copier.copyHeader();
                t = core.lifecycle.build(d, entry, def, newLowers);
            }
            hook.reached("built");
            long t3 = System.nanoTime();
            if (d.persistent) {
                core.store.save(d, def);
            }
            LOG.info("device {}: replace pause: suspend {} µs, last copy {} µs ({} bytes), {} {} µs, commit {} µs",
                    d.name, (t1 - t0) / 1000, (t2 - t1) / 1000, copier.copiedBytes() - before,
                    moved ? "move" : "close and reopen", (t3 - t2) / 1000, (System.nanoTime() - t3) / 1000);
            return t;
        } catch (IOException | RuntimeException e) {
            if (t != null && !moved) {
                core.lifecycle.closeQuietly(d, t);
            }
            if (moved) {
                try {
                    old.moveCacheDevice(o.view); // back: the old device is as the suspend left it
                } catch (IOException | RuntimeException m) {
                    LOG.warn("device {}: could not move the cache back to {} ({}); reopening it there", d.name,
                            o.name, m.getMessage());
                    core.lifecycle.closeQuietly(d, old);
                    oldClosed = true;
                }
            }
            try {
                blank(n);
            } catch (IOException | RuntimeException b) {
                LOG.warn("device {}: could not blank {} ({}); the next start does", d.name, n.name, b.getMessage());
            }
            if (oldClosed) {
                reopenOld(d, entry, oldDef, oldLowers);
            } else {
                if (suspended) {
                    resumeOrReopen(d, old, entry, oldDef, oldLowers);
                }
                d.gate.open();
            }
            d.holds.open();
            throw e;
        }
    }

    /** After the commit: the moved target resumes on the new device; if it cannot, it is rebuilt there. */
    private Target resumeMoved(MappedDevice d, Target moved, DeviceDefinition def, List<String> newLowers)
            throws IOException {
        try {
            moved.resume();
            return moved;
        } catch (IOException | RuntimeException e) {
            LOG.warn("device {}: the cache did not resume on its new device ({}); reopening it there", d.name,
                    e.getMessage());
            core.lifecycle.closeQuietly(d, moved);
            try {
                return core.lifecycle.build(d, d.factory, def, newLowers);
            } catch (IOException | RuntimeException b) {
                d.target = null;
                d.waitingFor = "a successful build (see last_error)";
                d.lastError = "cache:replace committed but the cache could not be reopened on its new device: "
                        + b.getMessage();
                d.holds.open();
                LOG.error("device {}: {}", d.name, d.lastError);
                return null;
            }
        }
    }

    /** Rollback of a suspended (not moved or moved back) old target: resume it, or rebuild it over the old devices. */
    private void resumeOrReopen(MappedDevice d, Target old, FactoryEntry entry, DeviceDefinition oldDef,
            List<String> oldLowers) throws IOException {
        try {
            old.resume();
        } catch (IOException | RuntimeException e) {
            core.lifecycle.closeQuietly(d, old);
            reopenOld(d, entry, oldDef, oldLowers);
        }
    }

    private void reopenOld(MappedDevice d, FactoryEntry entry, DeviceDefinition oldDef, List<String> oldLowers)
            throws IOException {
        try {
            core.lifecycle.attach(d, entry, core.lifecycle.build(d, entry, oldDef, oldLowers));
        } catch (IOException | RuntimeException e) {
            d.target = null;
            d.waitingFor = "a successful build (see last_error)";
            d.lastError = "cache:replace failed and the cache could not be reopened on its old device: " + e.getMessage();
            throw new IOException("device '" + d.name + "': " + d.lastError, e);
        }
    }

    /** Zeroes a device's first block and flushes it: every cache policy then reads it as blank. */
    static void blank(MappedDevice x) throws IOException {
        x.view.write(0, ByteBuffer.allocate(ImageCopier.HEADER), 0);
        x.view.flush();
    }

    private static DeviceDefinition journal(String device, String key, String oldName, String newName) {
        Map<String, String> a = new LinkedHashMap<>();
        a.put("argument", key);
        a.put("old", oldName);
        a.put("new", newName);
        return new DeviceDefinition(journalName(device), JOURNAL_TYPE, a, null, Map.of(), device);
    }

    private static String journalName(String device) {
        return device + ".replace";
    }

    /** A stand-in for the journal's store key (it is no device: never in the graph). */
    private static MappedDevice journalDevice(MappedDevice d) {
        return new MappedDevice(() -> 0L, new DeviceDefinition(journalName(d.name), JOURNAL_TYPE, Map.of()));
    }

    private void deleteJournal(String device, MappedDevice journal) {
        try {
            core.store.delete(journal);
        } catch (IOException e) {
            LOG.warn("device {}: could not delete the cache:replace journal ({}); the next start resolves it", device,
                    e.getMessage());
        }
    }

    /**
     * At start, before any definition is applied (and before {@link Attacher#recover}, which leaves
     * journals alone): decides for every journal which device is to be blanked. Never throws.
     */
    void recover(DefinitionStore store) {
        try {
            Map<String, DeviceDefinition> byName = new LinkedHashMap<>();
            List<DeviceDefinition> journals = new ArrayList<>();
            for (String k : store.keys()) {
                Optional<DeviceDefinition> def = store.load(k);
                if (def.isEmpty()) {
                    continue;
                }
                byName.put(def.get().name(), def.get());
                if (JOURNAL_TYPE.equals(def.get().type())) {
                    journals.add(def.get());
                }
            }
            for (DeviceDefinition j : journals) {
                DeviceDefinition upper = byName.get(j.stagedFor());
                String key = j.arguments().get("argument");
                boolean committed = upper != null && j.arguments().get("new").equals(upper.arguments().get(key));
                String blank = committed ? j.arguments().get("old") : j.arguments().get("new");
                pendingBlank.put(blank, j.name());
                LOG.info("device {}: an interrupted cache:replace ends on {} ({}); {} is blanked when it is up",
                        j.stagedFor(), committed ? j.arguments().get("new") : j.arguments().get("old"),
                        committed ? "after its commit" : "before its commit", blank);
            }
        } catch (IOException | RuntimeException e) {
            LOG.error("could not resolve interrupted cache:replace runs: {}", e.getMessage(), e);
        }
    }

    /** A device was built and is up: blank it first if an interrupted replace left a copy on it. */
    void built(MappedDevice d) {
        String journal = pendingBlank.get(d.name);
        if (journal == null) {
            return;
        }
        try {
            blank(d);
            pendingBlank.remove(d.name);
            MappedDevice j = new MappedDevice(() -> 0L, new DeviceDefinition(journal, JOURNAL_TYPE, Map.of()));
            if (!pendingBlank.containsValue(journal)) {
                core.store.delete(j);
            }
            LOG.info("device {}: blanked the copy an interrupted cache:replace left on it", d.name);
        } catch (IOException | RuntimeException e) {
            LOG.error("device {}: could not blank the copy an interrupted cache:replace left on it: {}", d.name,
                    e.getMessage());
        }
    }
}
