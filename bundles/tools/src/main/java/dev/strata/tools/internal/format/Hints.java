package dev.strata.tools.internal.format;

/**
 * What the operator passed to {@code repair} about how the device was built, for a superblock
 * that must be rebuilt: the backing (origin) device's size and the cache block size; 0 = not given.
 */
public record Hints(long backingSize, int blockSize) {
    public static final Hints NONE = new Hints(0, 0);
}
