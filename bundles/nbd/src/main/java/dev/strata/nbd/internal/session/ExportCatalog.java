package dev.strata.nbd.internal.session;

import java.util.List;

/** The exports a client can choose from on one listener. */
public interface ExportCatalog {

    /** The export called {@code name}; the empty name selects the only export if there is exactly one. */
    ExportView find(String name);

    List<? extends ExportView> list();
}
