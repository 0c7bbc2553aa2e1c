package dev.strata.testkit.crash;

import dev.strata.testsupport.crash.CrashModelProperties;
import dev.strata.testsupport.crash.CrashTestSubject;

/** The crash model (jqwik, {@value CrashModelProperties#TRIES} sequences) on {@code spindle}. */
class SpindleCrashModelTest extends CrashModelProperties {
    @Override
    protected CrashTestSubject subject() {
        return Subjects.spindle();
    }
}
