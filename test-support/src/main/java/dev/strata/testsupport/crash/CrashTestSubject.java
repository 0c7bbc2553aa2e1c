package dev.strata.testsupport.crash;

import dev.strata.api.BlockDevice;

import java.io.IOException;
import java.util.List;

/**
 * A target under crash test: how to build it over crashable devices and how to reopen it from
 * what survived. This is all a target supplies to get the crash model
 * ({@link CrashModelRunner}, {@link CrashModelProperties}) and crash replay
 * ({@link CrashReplay}).
 *
 * <p>The harness creates one device per {@link #devices()} entry (a {@link CrashableDevice}, or
 * a log-writes recorder over one during crash replay) and hands them over in that order. The
 * target must not close them. The harness reads and writes the first
 * {@link Workload#bytes()} bytes of the target.
 */
public interface CrashTestSubject {

    /** A name for reports. */
    String name();

    /** The devices the target is built over, in order. A leaf target needs none. */
    default List<DeviceSpec> devices() {
        return List.of();
    }

    /** Builds a fresh target over {@code devices} (formatting them if it keeps metadata). */
    BlockDevice create(List<BlockDevice> devices) throws IOException;

    /**
     * Reopens the target over {@code devices} after a crash or a clean close, recovering from
     * what they hold. For a leaf target (no devices) this reopens its own storage.
     */
    BlockDevice reopen(List<BlockDevice> devices) throws IOException;

    /**
     * Releases a target whose devices have crashed, without making anything durable (they are
     * dead anyway; every I/O to them fails). Must return promptly. The default closes it and
     * ignores the I/O errors that causes.
     */
    default void abandon(BlockDevice target) {
        try {
            target.close();
        } catch (IOException | RuntimeException ignored) {
            // the devices below are dead: errors are expected
        }
    }

    /** One step of background work (writeback, a daemon's {@code runOnce()}); default none. */
    default void background(BlockDevice target) throws IOException {
    }

    /**
     * The target's own offline checker, run on the devices after every crash, before reopening
     * (e.g. a cache's metadata checker). Throws {@link AssertionError} or {@link IOException} on
     * an inconsistency. Default: nothing to check.
     */
    default void checkOffline(List<BlockDevice> devices) throws IOException {
    }

    /**
     * Whether the target must also satisfy the log property ({@link LogModel}): after a crash the
     * device equals the state after a prefix of the acknowledged writes.
     */
    default boolean logStructured() {
        return false;
    }

    /**
     * Crash replay only: the device the workload is recorded on (below the log-writes recorder).
     * Default: a fresh {@link CrashableDevice}. A subject may return a real driver's device here
     * (a file, O_DIRECT, memory) so that the recording runs on it.
     */
    default BlockDevice recordingMedium(DeviceSpec spec) throws IOException {
        return new CrashableDevice(spec.name(), spec.size(), spec.blockSize());
    }

    /**
     * Crash replay only: a device holding {@code image} (a replayed crash image) that the target
     * is reopened over. Default: a {@link CrashableDevice}. A subject may materialise the image in
     * a real driver's device instead.
     */
    default BlockDevice replayMedium(DeviceSpec spec, byte[] image) throws IOException {
        return CrashableDevice.ofImage(spec.name(), image, spec.blockSize());
    }

    /** Crash replay only: releases a device returned by {@link #recordingMedium} or {@link #replayMedium}. */
    default void releaseMedium(BlockDevice medium) throws IOException {
        medium.close();
    }

    /** The shape of the sequences to run. */
    default Workload workload() {
        return Workload.DEFAULT;
    }

    /** A crashable device the target needs: a name, a size and a logical block size. */
    record DeviceSpec(String name, long size, int blockSize) {
    }
}
