package dev.strata.mirror.internal.io;

import dev.strata.api.InvalidArgumentException;
import dev.strata.mirror.internal.region.RegionTracker;
import java.util.BitSet;

/**
 * The {@code resync} action ({@code mirror:resync}): which regions to copy again from the first
 * in-sync leg. {@code dirty} (the default) are the regions the log holds marked, the ones that
 * may differ; {@code all} is every region, for legs suspected to differ behind the log's back
 * (a leg restored from an old backup). Copying an unmarked region is safe: the copy holds the
 * region's lock, and a copy torn by a crash between legs that were equal leaves them equal.
 */
final class ResyncRequest {
    private ResyncRequest() {
    }

    static BitSet regions(String value, RegionTracker tracker) {
        String v = value == null || value.isBlank() ? "dirty" : value.trim();
        switch (v) {
            case "dirty":
                return tracker.durableSnapshot();
            case "all": {
                BitSet b = new BitSet(tracker.regions());
                b.set(0, tracker.regions());
                return b;
            }
            default:
                throw new InvalidArgumentException("mirror: resync=" + value + " is unknown; use resync=dirty (the marked regions) or resync=all");
        }
    }
}
