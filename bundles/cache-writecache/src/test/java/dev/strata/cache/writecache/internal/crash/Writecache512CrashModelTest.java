package dev.strata.cache.writecache.internal.crash;

import dev.strata.cache.writecache.internal.io.WritecacheSubject;
import dev.strata.testsupport.crash.CrashModelProperties;
import dev.strata.testsupport.crash.CrashTestSubject;

/** The crash model with 512-byte cache blocks. */
class Writecache512CrashModelTest extends CrashModelProperties {
    @Override
    protected CrashTestSubject subject() {
        return WritecacheSubject.sectors();
    }
}
