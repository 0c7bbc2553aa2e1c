package dev.strata.api;

import java.util.Map;

/** What a {@link TargetFactory} gets to build a target. */
public interface TargetContext {

    /** The name of the mapped device the target is built for. */
    String deviceName();

    /** The arguments, as given by the user or the stored definition. Unmodifiable. */
    Map<String, String> arguments();

    /**
     * A lower device named in the arguments (one of {@link TargetFactory#lowerDevices}).
     * The target must not close it.
     *
     * @throws InvalidArgumentException if there is no such device
     */
    BlockDevice lowerDevice(String name);

    /**
     * The identity of a lower device: a UUID the manager stamps into a device's definition when
     * it is created, stable across restarts and reloads. A cache records its backing device's
     * identity on its own device and refuses to open over a device with another one.
     *
     * @return the identity, or {@code null} where the caller has none (tests, tools)
     */
    default String lowerDeviceId(String name) {
        return null;
    }

    /**
     * A long build (a cache device formatted, a file preallocated) says how far it got, as often
     * as it likes; whoever asked for the build (the console of a {@code dev:create}) is shown it as
     * a progress line, or nobody (a start-up, a test). Never blocks, never throws.
     *
     * @param what  what the build does now, a few words ({@code "formatting ssd"})
     * @param done  bytes done so far
     * @param total bytes in all
     * @since 1.9
     */
    default void progress(String what, long done, long total) {
    }
}
