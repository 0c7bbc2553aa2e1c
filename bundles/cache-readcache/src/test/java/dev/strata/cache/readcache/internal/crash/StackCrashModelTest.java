package dev.strata.cache.readcache.internal.crash;

import dev.strata.testsupport.crash.CrashModelProperties;
import dev.strata.testsupport.crash.CrashTestSubject;

/** The crash model on the writeboost-over-readcache stack (durability of the whole stack). */
class StackCrashModelTest extends CrashModelProperties {
    @Override
    protected CrashTestSubject subject() {
        return new StackSubject();
    }
}
