package dev.strata.nbd.internal.command;

import java.util.LinkedHashMap;
import java.util.Map;

/** The export store of the tests: what {@code nbd:export} would persist, kept in a map (ids as Config Admin's). */
final class MemoryExportStore implements ExportStore {
    /** The stored specs by id, in creation order. */
    final Map<String, ExportSpec> stored = new LinkedHashMap<>();
    private int ids;

    @Override
    public synchronized String create(ExportSpec spec) {
        String id = ExportSpec.FACTORY_PID + "~" + ++ids;
        stored.put(id, spec);
        return id;
    }

    @Override
    public synchronized void delete(String id) {
        stored.remove(id);
    }
}
