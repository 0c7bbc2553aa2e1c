package dev.strata.cache.writeboost.internal.crash;

import dev.strata.testsupport.crash.CrashModelProperties;
import dev.strata.testsupport.crash.CrashTestSubject;

/** The crash model with the log property: everything through the log. */
class WriteboostCrashModelTest extends CrashModelProperties {
    @Override
    protected CrashTestSubject subject() {
        return WriteboostSubject.cached();
    }
}
