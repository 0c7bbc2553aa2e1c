package dev.strata.cache.readcache.internal.crash;

import dev.strata.testsupport.crash.CrashModelProperties;
import dev.strata.testsupport.crash.CrashTestSubject;

/**
 * The crash model on writeboost over readcache with {@code write_promote=on}: writeboost's
 * writeback of hot blocks is kept in the read cache (at least 1,000 crashes).
 */
class StackWritePromoteCrashModelTest extends CrashModelProperties {
    @Override
    protected CrashTestSubject subject() {
        return new StackSubject(true);
    }
}
