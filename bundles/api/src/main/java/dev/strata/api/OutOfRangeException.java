package dev.strata.api;

/** A request that reaches outside the device; nothing was read or written. */
public class OutOfRangeException extends InvalidRequestException {
    private static final long serialVersionUID = 1L;

    public OutOfRangeException(long offset, long length, long size) {
        super("request [" + offset + ", +" + length + ") is outside the device (size " + size + " bytes)");
    }
}
