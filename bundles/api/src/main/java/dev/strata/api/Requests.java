package dev.strata.api;

/**
 * The addressing rules of {@link BlockDevice}, written once so that every target rejects the
 * same requests with the same messages.
 */
public final class Requests {
    private Requests() {
    }

    /**
     * Checks that {@code [offset, offset+length)} is sector-aligned and inside the device.
     *
     * @throws MisalignedRequestException if offset or length is not a multiple of 512
     * @throws OutOfRangeException if the range reaches outside the device or is negative
     */
    public static void check(BlockDevice device, long offset, long length) {
        check(device.size(), offset, length);
    }

    /** As {@link #check(BlockDevice, long, long)} for a device of {@code size} bytes. */
    public static void check(long size, long offset, long length) {
        if (offset < 0 || length < 0 || offset > size || length > size - offset) {
            throw new OutOfRangeException(offset, length, size);
        }
        if (((offset | length) & (BlockDevice.SECTOR - 1)) != 0) {
            throw new MisalignedRequestException(offset, length);
        }
    }
}
