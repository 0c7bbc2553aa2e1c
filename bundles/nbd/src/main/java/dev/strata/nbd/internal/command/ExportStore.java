package dev.strata.nbd.internal.command;

import java.io.IOException;

/** Where exports persist (Configuration Admin in the framework; a map in unit tests). */
public interface ExportStore {

    /** Stores a new export; returns its id (the configuration's PID). */
    String create(ExportSpec spec) throws IOException;

    /** Forgets an export stored under {@code id}. */
    void delete(String id) throws IOException;
}
