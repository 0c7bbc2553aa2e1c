package dev.strata.api;

import java.io.IOException;

/** An I/O error on a device, naming the device and the offset where it happened. */
public class DeviceIOException extends IOException {
    private static final long serialVersionUID = 1L;
    private final String device;
    private final long offset;

    public DeviceIOException(String device, long offset, String message) {
        this(device, offset, message, null);
    }

    public DeviceIOException(String device, long offset, String message, Throwable cause) {
        super(device + " at offset " + offset + ": " + message, cause);
        this.device = device;
        this.offset = offset;
    }

    /** The device's name (a mapped device name, or a path for a leaf driver). */
    public String device() {
        return device;
    }

    /** The byte offset of the failed request, or -1 for a flush. */
    public long offset() {
        return offset;
    }
}
