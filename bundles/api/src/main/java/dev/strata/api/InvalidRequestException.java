package dev.strata.api;

/** A request that breaks the {@link BlockDevice} addressing rules; nothing was read or written. */
public class InvalidRequestException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    public InvalidRequestException(String message) {
        super(message);
    }
}
