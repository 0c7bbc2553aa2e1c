package dev.strata.cache.writeboost.internal.crash;

import dev.strata.testsupport.crash.CrashModelProperties;
import dev.strata.testsupport.crash.CrashTestSubject;

/** The crash model with the log property, large writes bypassing the log. */
class WriteboostBypassCrashModelTest extends CrashModelProperties {
    @Override
    protected CrashTestSubject subject() {
        return WriteboostSubject.bypassing();
    }
}
