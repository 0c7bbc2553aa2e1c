package dev.strata.cache.writecache.internal.crash;

import dev.strata.cache.writecache.internal.io.WritecacheSubject;
import dev.strata.testsupport.crash.CrashModelProperties;
import dev.strata.testsupport.crash.CrashTestSubject;

/** The crash model with the disk rule: a cache where most of the workload fits. */
class WritecacheCrashModelTest extends CrashModelProperties {
    @Override
    protected CrashTestSubject subject() {
        return WritecacheSubject.roomy();
    }
}
