package dev.strata.readcache.policies.internal;

import dev.strata.api.ReadCachePolicy.Contents;
import java.util.Arrays;

/** Contents for tests. */
final class ReadCacheContents {
    private ReadCacheContents() {
    }

    static Contents empty(int slots) {
        long[] keys = new long[slots];
        Arrays.fill(keys, Contents.EMPTY);
        return Contents.of(keys);
    }
}
