package dev.strata.cache.writeboost.internal.crash;

import dev.strata.testsupport.crash.CrashModelProperties;
import dev.strata.testsupport.crash.CrashTestSubject;

/** The crash model, read caching on and large writes, write-zeroes and discards bypassing the log. */
class WriteboostReadCacheBypassCrashModelTest extends CrashModelProperties {
    @Override
    protected CrashTestSubject subject() {
        return WriteboostSubject.readCachingBypassing();
    }
}
