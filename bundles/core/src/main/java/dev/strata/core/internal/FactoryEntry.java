package dev.strata.core.internal;

import dev.strata.api.TargetFactory;

/**
 * A registered {@link TargetFactory} service and what {@code dev:targets} shows of it. Entries
 * are compared by identity: a factory that is unregistered and registered again is a new entry.
 *
 * @param type    the {@code strata.target} property
 * @param factory the service object
 * @param bundle  the providing bundle's symbolic name
 * @param version the providing bundle's version
 * @param ranking service ranking (higher wins)
 * @param id      service id (lower wins among equal rankings)
 */
public record FactoryEntry(String type, TargetFactory factory, String bundle, String version, int ranking, long id) {

    @Override
    public boolean equals(Object o) {
        return this == o;
    }

    @Override
    public int hashCode() {
        return System.identityHashCode(this);
    }

    boolean betterThan(FactoryEntry other) {
        return other == null || ranking > other.ranking || (ranking == other.ranking && id < other.id);
    }
}
