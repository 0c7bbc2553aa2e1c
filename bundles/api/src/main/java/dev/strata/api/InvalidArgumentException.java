package dev.strata.api;

/**
 * A user's mistake: an unknown key, a malformed value, a name already taken, a device in use.
 * The message is one line that says what was wrong and what to do; the shell prints it without
 * a stack trace. Whatever raised it changed nothing.
 */
public class InvalidArgumentException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    public InvalidArgumentException(String message) {
        super(message);
    }
}
