package dev.strata.cache.writecache.internal.crash;

import dev.strata.cache.writecache.internal.io.WritecacheSubject;
import dev.strata.testsupport.crash.CrashModelProperties;
import dev.strata.testsupport.crash.CrashTestSubject;

/** The crash model on a cache that is full most of the time (write-around, flush forwarding, blocked writers). */
class WritecacheSmallCrashModelTest extends CrashModelProperties {
    @Override
    protected CrashTestSubject subject() {
        return WritecacheSubject.small();
    }
}
