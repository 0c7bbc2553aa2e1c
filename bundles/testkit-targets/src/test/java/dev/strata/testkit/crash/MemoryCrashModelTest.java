package dev.strata.testkit.crash;

import dev.strata.testsupport.crash.CrashModelProperties;
import dev.strata.testsupport.crash.CrashTestSubject;

/** The model on the {@code memory} driver: reads return the newest value through writes, zeroing, discards, flushes (no crashes: it keeps nothing). */
class MemoryCrashModelTest extends CrashModelProperties {
    @Override
    protected CrashTestSubject subject() {
        return DriverSubjects.memory();
    }
}
