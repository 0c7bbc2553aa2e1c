package dev.strata.api;

/** A request did not complete in time; the device below is stuck or gone. */
public class DeviceTimeoutException extends DeviceIOException {
    private static final long serialVersionUID = 1L;

    public DeviceTimeoutException(String device, long offset, String message) {
        super(device, offset, message);
    }
}
