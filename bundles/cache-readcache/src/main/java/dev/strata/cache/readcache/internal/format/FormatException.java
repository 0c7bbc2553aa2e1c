package dev.strata.cache.readcache.internal.format;

/** An on-disk structure that cannot be used, and why. */
public final class FormatException extends Exception {
    private static final long serialVersionUID = 1L;

    /** What is wrong. */
    public enum Kind {
        /** All zero: nothing was ever written here. */
        BLANK,
        /** Not a Strata structure at all. */
        FOREIGN,
        /** A Strata structure whose checksum does not match. */
        CORRUPT,
        /** A Strata structure of another format version. */
        VERSION,
        /** A Strata structure of another cache policy (writeboost, writecache, …). */
        POLICY
    }

    private final Kind kind;

    public FormatException(Kind kind, String message) {
        super(message);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }
}
