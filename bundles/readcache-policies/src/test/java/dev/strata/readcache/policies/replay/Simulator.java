package dev.strata.readcache.policies.replay;

/** A cache of a fixed number of keys fed one key at a time by the replay. */
interface Simulator {
    /** Accesses {@code key}; true if it was a hit. */
    boolean access(long key);
}
