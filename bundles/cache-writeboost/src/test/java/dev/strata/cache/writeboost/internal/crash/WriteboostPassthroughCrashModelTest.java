package dev.strata.cache.writeboost.internal.crash;

import dev.strata.testsupport.crash.CrashModelProperties;
import dev.strata.testsupport.crash.CrashTestSubject;

/** The crash model (durability: the disk rule) with cache_mode=passthrough. */
class WriteboostPassthroughCrashModelTest extends CrashModelProperties {
    @Override
    protected CrashTestSubject subject() {
        return WriteboostSubject.passthrough();
    }
}
