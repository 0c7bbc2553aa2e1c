package dev.strata.cache.writeboost.internal.io;

/**
 * The parts of one writeboost cache, each with one job, and how they reach each other: every
 * part holds this and the shared {@link LogState}. Built once by {@link WriteboostCache} (which
 * sets the fields in order: state and stats first) and never changed afterwards.
 */
final class Parts {
    LogState log;
    Stats stats;
    LogHead head;
    LogFlush flush;
    WritePath write;
    Bypass bypass;
    ReadPath read;
    Flusher flusher;
    Writeback writeback;
    RecordUpdater record;
    DataSync sync;
    Injector injector;
    Daemons daemons;
}
