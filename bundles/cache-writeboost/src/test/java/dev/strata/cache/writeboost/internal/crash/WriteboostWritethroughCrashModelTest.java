package dev.strata.cache.writeboost.internal.crash;

import dev.strata.testsupport.crash.CrashModelProperties;
import dev.strata.testsupport.crash.CrashTestSubject;

/** The crash model (durability: the disk rule) with cache_mode=writethrough (writes to the backing device, clean copies injected). */
class WriteboostWritethroughCrashModelTest extends CrashModelProperties {
    @Override
    protected CrashTestSubject subject() {
        return WriteboostSubject.writethrough();
    }
}
