package dev.strata.api;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Builds {@link Target}s of one type. Registered as an OSGi service with the property
 * {@value #TYPE}{@code =<type>}, usually by a Declarative Services component. When the service
 * goes away (its bundle is stopped or updated), the manager suspends and closes every target it
 * built; when a factory of the same type appears again, the targets are reopened from their
 * on-disk state with the same arguments.
 */
public interface TargetFactory {

    /** Service property naming the target type, e.g. {@code strata.target=file}. */
    String TYPE = "strata.target";

    /** One line for {@code dev:targets}: the arguments this type takes. */
    String usage();

    /**
     * The names of the mapped devices the arguments refer to (e.g. the values of
     * {@code backing=} and {@code cache=}), so the manager can check and record dependencies
     * before anything is built. Leaf targets return an empty list.
     *
     * @throws InvalidArgumentException if the arguments are malformed
     */
    List<String> lowerDevices(Map<String, String> arguments);

    /**
     * How the target built from these arguments holds each of its lower devices (every name of
     * {@link #lowerDevices}). The manager checks the claims before anything is built and refuses
     * a conflicting one, naming the holder. By default every lower device is held
     * {@link Claim#SHARED}; a target that owns a device's contents (a cache's devices, a mirror's
     * legs) claims it {@link Claim#EXCLUSIVE}.
     *
     * @throws InvalidArgumentException if the arguments are malformed
     */
    default Map<String, Claim> claims(Map<String, String> arguments) {
        Map<String, Claim> m = new LinkedHashMap<>();
        for (String d : lowerDevices(arguments)) {
            m.put(d, Claim.SHARED);
        }
        return m;
    }

    /**
     * Whether a target built by this factory from {@code newArguments} takes over the state of a
     * target of {@code oldType} built from {@code oldArguments}, dirty data included (e.g. a
     * writeboost reload over the same cache and backing devices). The manager refuses to reload a
     * target that holds data its lower devices do not into one that cannot adopt it, unless
     * forced. By default nothing is adopted.
     */
    default boolean adopts(String oldType, Map<String, String> oldArguments, Map<String, String> newArguments) {
        return false;
    }

    /**
     * The argument key naming the one lower device whose data the target presents (a cache's
     * {@code backing} or {@code origin}, a linear window's {@code device}), so that the manager can
     * stack a target of this type under a live device's name ({@link DeviceManager#attach}). By
     * default {@code null}: the type cannot be attached that way.
     *
     * @since 1.5
     */
    default String backingArgument() {
        return null;
    }

    /**
     * Whether {@code create} takes the persisted tunable {@code key} (a setting kept by
     * {@link DeviceManager#message} with persist) among its arguments. The manager builds the
     * target with every such tunable in {@link TargetContext#arguments()} (the tunable's value
     * replacing an argument of the same key, being newer), so that it is in force from the target's
     * first moment, before any background work (e.g. a cache's writeback) starts; the others are
     * re-applied with {@link Target#message} right after the build. By default none.
     *
     * @since 1.5
     */
    default boolean buildsWithTunable(String key) {
        return false;
    }

    /**
     * Checks {@code arguments} as {@link #create} checks them, without touching any device: what
     * create would refuse for these arguments alone (a value out of range, a malformed number or
     * size, a key it does not take), refused with the same one line. What only the devices can tell
     * (a cache device too small, a cache of another backing device) is left to {@code create}.
     * <p>
     * The manager calls it before an operation that would otherwise find the mistake only after it
     * paused the device, closed its old target or stored the new definition (a {@code cache:switch}
     * onto the same cache device, a {@code dev:reload} onto the same lower devices), so that such a
     * mistake changes nothing. {@code arguments} are the ones {@code create} would get (persisted
     * tunables the factory {@linkplain #buildsWithTunable builds with} included). Implementations
     * should call the parsing {@code create} uses rather than repeat it. By default nothing is
     * checked (create still checks everything).
     *
     * @throws InvalidArgumentException the line {@code create} would refuse these arguments with
     * @since 1.10
     */
    default void check(Map<String, String> arguments) {
    }

    /**
     * Builds (or reopens) a target. Must validate every argument before touching any device and
     * throw {@link InvalidArgumentException} with one clear line, changing nothing, on a mistake.
     */
    Target create(TargetContext context) throws IOException;
}
