package dev.strata.mirror.internal.format;

/** What is on the log device is not a valid mirror log header; the message says why in one line. */
public final class FormatException extends Exception {
    private static final long serialVersionUID = 1L;

    public FormatException(String message) {
        super(message);
    }
}
