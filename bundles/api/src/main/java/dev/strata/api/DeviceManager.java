package dev.strata.api;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The mapped devices: named, stacked, suspendable, hot-swappable. Registered as an OSGi service
 * by the core bundle. Every method that takes user input throws {@link InvalidArgumentException}
 * (one line, nothing changed) for a mistake.
 */
public interface DeviceManager {

    /**
     * Creates a device and persists its definition.
     *
     * @throws InvalidArgumentException name taken or malformed, unknown type, bad arguments,
     *         missing lower device
     */
    DeviceInfo create(String name, String type, Map<String, String> arguments) throws IOException;

    /**
     * {@link #create(String, String, Map)}, with the build's progress ({@link TargetContext#progress})
     * passed to {@code progress} (a console's progress line) while it runs.
     *
     * @since 1.9
     */
    default DeviceInfo create(String name, String type, Map<String, String> arguments, BuildProgress progress)
            throws IOException {
        return create(name, type, arguments);
    }

    /** How far the build of a device being created has got (see {@link TargetContext#progress}). */
    @FunctionalInterface
    interface BuildProgress {
        void update(String what, long done, long total);
    }

    /**
     * Closes and forgets a device. Refused while anything uses it (a device above, an export, an
     * open handle).
     */
    void remove(String name) throws IOException;

    /**
     * {@link #remove(String)}, and with {@code force} also a device whose target holds data its
     * lower devices do not (dirty blocks): the data is stranded on its cache device. Without
     * {@code force} such a removal is refused with the dirty count and the safe command.
     */
    void remove(String name, boolean force) throws IOException;

    List<DeviceInfo> list();

    Optional<DeviceInfo> info(String name);

    /** The target's status counters, prefixed by the device's own (state, I/O counts). */
    Map<String, String> status(String name) throws IOException;

    /** Passes a tunable to the device's target and persists it in the device's definition. */
    void message(String name, String key, String value) throws IOException;

    /**
     * Passes a tunable to the device's target; with {@code persist} it is also kept in the
     * device's definition (survives restart and reload), without it is a one-off.
     */
    void message(String name, String key, String value, boolean persist) throws IOException;

    /**
     * {@link #message(String, String, String, boolean)}, returning a note for the user, or null:
     * the target's ({@link Target#messageWithNote}: a change accepted that takes effect later, a
     * pending change cancelled) and the manager's (an action, done once and not kept). By default
     * the plain message and null.
     *
     * @since 1.10
     */
    default String messageWithNote(String name, String key, String value, boolean persist) throws IOException {
        message(name, key, value, persist);
        return null;
    }

    /** Closes the gate (new I/O waits), drains in-flight I/O, then suspends the target. */
    void suspend(String name) throws IOException;

    /** Resumes the target and opens the gate. */
    void resume(String name) throws IOException;

    /**
     * Builds a new target and swaps it in under a short suspend. If the new target cannot be
     * built, the old one stays and the device resumes unchanged.
     */
    DeviceInfo reload(String name, String type, Map<String, String> arguments) throws IOException;

    /**
     * {@link #reload(String, String, Map)}; a reload that would drop data the old target holds
     * and the new one cannot adopt (see {@link TargetFactory#adopts}) is refused unless
     * {@code force}.
     */
    DeviceInfo reload(String name, String type, Map<String, String> arguments, boolean force) throws IOException;

    /**
     * Puts a target in front of a live device under the device's own name ({@code cache:attach}):
     * the device's current target moves, as it is and without a pause, to a new device
     * {@code lowerName} (listed, persisted, holding the device's old definition and tunables under
     * a new identity); a target of {@code type} is built over it — {@code arguments} plus the
     * factory's {@link TargetFactory#backingArgument() backing argument} naming {@code lowerName}
     * — and takes the device's place in one short suspend. The device keeps its name, identity,
     * handles (exports) and the devices stacked on it. Persisted so that a restart, also after a
     * crash at any point, finds either the old device or the new stack, never both halves.
     *
     * @param lowerName the new lower device's name, or {@code null} for {@code NAME.OLDTYPE}
     * @throws InvalidArgumentException no such device, not active, unknown type or a type that
     *         cannot be stacked this way, the backing argument given explicitly, a lower device
     *         missing, taken or conflicting (one line, nothing changed, nothing paused)
     * @since 1.5
     */
    default DeviceInfo attach(String name, String type, Map<String, String> arguments, String lowerName)
            throws IOException {
        throw new InvalidArgumentException("this device manager cannot attach a target to a live device");
    }

    /**
     * The reverse of {@link #attach}, the last step of {@code cache:detach}: the device takes over
     * the target and definition (type, arguments, tunables) of its lower device {@code lowerName}
     * in one short suspend, keeping its own name, identity, handles and upper devices, and
     * {@code lowerName} disappears. The device's target must hold no data {@code lowerName} does
     * not have (a drained cache) and nothing else may use {@code lowerName}. Persisted so that a
     * restart, also after a crash at any point, finds either the old stack or the collapsed device.
     *
     * @throws InvalidArgumentException no such device, {@code lowerName} not under it or used by
     *         something else, dirty data in the target (one line, nothing changed)
     * @since 1.6
     */
    default DeviceInfo collapse(String name, String lowerName) throws IOException {
        throw new InvalidArgumentException("this device manager cannot collapse a device onto its lower device");
    }

    /**
     * Checks a {@link #switchTarget} without changing anything (before the caller drains the old
     * target for it): every mistake it would refuse for its arguments and devices is thrown here.
     *
     * @return whether the new target adopts the old one's state, dirty data included (no drain
     *         needed, and the cached data is kept)
     * @throws InvalidArgumentException as {@link #switchTarget}, except for dirty data
     * @since 1.7
     */
    default boolean checkSwitch(String name, String type, Map<String, String> arguments, String backing,
            Map<String, String> firstBuild) throws IOException {
        throw new InvalidArgumentException("this device manager cannot switch a device's target");
    }

    /**
     * Replaces a cache device's target by one of another {@code type} over the same backing device
     * ({@code cache:switch}): {@code arguments} plus the factory's
     * {@link TargetFactory#backingArgument() backing argument} naming {@code backing}, which must be
     * one of the device's lower devices. The device keeps its name, identity, handles, upper devices
     * and its own marks. A new target whose lower devices other than {@code backing} are not the old
     * one's is built while the old one serves I/O and takes over in one short suspend; one that
     * reuses a lower device of the old (the same cache device) is built inside the suspend, after
     * the old one is closed. Unless the new target {@link TargetFactory#adopts adopts} the old one's
     * state, the old target must hold no dirty data (the caller drains it first). The new definition
     * is stored inside the suspend (the commit): a restart after a crash before it finds the old
     * target, after it the new one.
     *
     * @param firstBuild arguments for the first build only (e.g. {@code format=true} for a cache
     *        device the old target released): stored with the commit, so that a restart before the
     *        first build succeeds applies them, and stored again without them once it has
     * @throws InvalidArgumentException no such device, {@code backing} not under it, unknown type or
     *         one that names no backing argument, the backing argument given explicitly, a lower
     *         device missing or conflicting, dirty data the new target cannot adopt (one line,
     *         nothing changed, nothing paused)
     * @since 1.7
     */
    default DeviceInfo switchTarget(String name, String type, Map<String, String> arguments, String backing,
            Map<String, String> firstBuild) throws IOException {
        throw new InvalidArgumentException("this device manager cannot switch a device's target");
    }

    /**
     * Moves a live cache to another cache device without writing its dirty data to the slow device
     * ({@code cache:replace}): the device's cache device is copied to {@code newCache} while I/O
     * continues (blocks the target writes meanwhile are tracked and copied again), then, in one
     * short suspend, what changed since is copied, the target is reopened over {@code newCache}
     * from the copy, and the device's definition names {@code newCache}. The old cache device is
     * then marked blank (its first block zeroed), so that no later open serves its stale copies.
     * Persisted so that a restart, also after a crash at any point, finds the cache on exactly one
     * of the two devices, with every block that was durable.
     * <p>
     * Cancellation: interrupting the caller before the suspend stops the copy and leaves the cache
     * as it was (on its old device); {@code newCache} is left blank.
     *
     * @throws InvalidArgumentException no such device, not a cache, {@code newCache} missing, the
     *         same device, in use, stacked on the device, or smaller than the old cache device
     *         (one line, nothing changed)
     * @throws InterruptedException cancelled before the suspend; nothing changed
     * @since 1.7
     */
    default DeviceInfo replace(String name, String newCache, ReplaceProgress progress)
            throws IOException, InterruptedException {
        throw new InvalidArgumentException("this device manager cannot replace a cache device");
    }

    /** How far {@link #replace} has got. */
    @FunctionalInterface
    interface ReplaceProgress {
        /**
         * @param copiedBytes bytes copied to the new cache device so far (recopies included)
         * @param leftBytes   bytes known to need copying now (changes as writes arrive)
         * @param pass        the copy pass (1: the whole device; later ones: what was written meanwhile);
         *                    0 once: the pause has begun, from then on a cancel is too late
         */
        void update(long copiedBytes, long leftBytes, int pass);
    }

    /**
     * Opens a device for use by {@code holder} (e.g. {@code nbd:export1}). While any handle is
     * open the device cannot be removed. I/O through the handle passes the device's gate, so it
     * waits (never fails) while the device is suspended or its target is being updated. A handle
     * is a shared use: a device another device holds {@link Claim#EXCLUSIVE exclusively} (a
     * cache's cache or backing device) cannot be opened, and a device with an open handle cannot
     * be claimed exclusively.
     *
     * @throws InvalidArgumentException no such device, or it is held exclusively (one line naming
     *         the holder)
     */
    DeviceHandle open(String name, String holder);

    /**
     * Runs {@code call} with the device's current target seen as a {@code type} (e.g.
     * {@link CacheTarget}). The target is not closed, reloaded or swapped while the call runs;
     * when the manager must close it (stop, remove, hot update of its bundle) it interrupts the
     * call, which must then return promptly. I/O keeps flowing through the gate meanwhile.
     *
     * @throws InvalidArgumentException no such device, no target right now, or a target that is
     *         not a {@code type} (one line naming the device and its type)
     * @throws InterruptedException the caller was interrupted (e.g. Ctrl-C), or the manager had to
     *         close the target
     */
    <T, R> R withTarget(String name, Class<T> type, TargetCall<? super T, R> call)
            throws IOException, InterruptedException;

    /** A call made with a device's target by {@link #withTarget}. */
    @FunctionalInterface
    interface TargetCall<T, R> {
        R call(T target) throws IOException, InterruptedException;
    }

    /** Target types currently available: type → usage line, bundle and version. */
    List<TargetType> targetTypes();

    /** A target type offered by a factory service. */
    record TargetType(String type, String usage, String bundle, String version) {
    }
}
