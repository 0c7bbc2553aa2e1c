package dev.strata.cache.writecache.internal.crash;

import dev.strata.cache.writecache.internal.io.WritecacheSubject;
import dev.strata.testsupport.crash.CrashModelProperties;
import dev.strata.testsupport.crash.CrashTestSubject;

/** The crash model in cleaner mode: whole-block writes go around and drop cached copies. */
class WritecacheCleanerCrashModelTest extends CrashModelProperties {
    @Override
    protected CrashTestSubject subject() {
        return WritecacheSubject.cleaner();
    }
}
