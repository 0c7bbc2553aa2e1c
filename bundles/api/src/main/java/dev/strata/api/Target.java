package dev.strata.api;

import java.io.IOException;
import java.util.Map;

/**
 * A {@link BlockDevice} with a lifecycle, built by a {@link TargetFactory} and owned by a mapped
 * device of the {@link DeviceManager}. The manager guarantees that no I/O is in flight while
 * {@link #suspend()}, {@link #resume()} or {@link #close()} run.
 */
public interface Target extends BlockDevice {

    /** The target type, as in the factory's {@link TargetFactory#TYPE} property. */
    String type();

    /**
     * Counters and state as key/values, in a stable order (a {@link java.util.LinkedHashMap}),
     * e.g. {@code read_hits=12}. Cheap enough to call every second.
     */
    Map<String, String> status();

    /**
     * Sets a runtime tunable or triggers an action.
     *
     * @throws InvalidArgumentException for an unknown key or a value out of range; nothing changes
     */
    default void message(String key, String value) throws IOException {
        throw new InvalidArgumentException("target '" + type() + "' has no tunable '" + key + "'");
    }

    /**
     * {@link #message}, returning a note for the user when the message was accepted but does not
     * simply take effect as asked (a mode change that waits for the dirty blocks to be written
     * back; a pending change that it cancelled), or null. The manager's {@code dev:message} prints
     * it after the key and value. By default {@link #message} and null.
     *
     * @throws InvalidArgumentException as {@link #message}; nothing changes
     * @since 1.10
     */
    default String messageWithNote(String key, String value) throws IOException {
        message(key, value);
        return null;
    }

    /** Stops background work and makes everything durable on the target's own devices. */
    default void suspend() throws IOException {
        flush();
    }

    /** Restarts background work stopped by {@link #suspend()}. */
    default void resume() throws IOException {
    }

    /**
     * Stops background work, makes everything durable and releases resources. Lower devices
     * are not closed: they belong to the manager. After close, the target can be reopened from
     * its on-disk state by its factory.
     */
    @Override
    void close() throws IOException;
}
