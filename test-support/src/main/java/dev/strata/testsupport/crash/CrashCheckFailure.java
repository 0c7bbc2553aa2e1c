package dev.strata.testsupport.crash;

/** The crash model or crash replay found a target breaking its durability contract. */
public class CrashCheckFailure extends AssertionError {
    private static final long serialVersionUID = 1L;

    public CrashCheckFailure(String message) {
        super(message);
    }

    public CrashCheckFailure(String message, Throwable cause) {
        super(message, cause);
    }
}
