package dev.strata.testsupport.crash;

/** The log property holds for a target that makes every write durable in order. */
class WriteThroughLogPropertyTest extends CrashModelProperties {
    @Override
    protected CrashTestSubject subject() {
        return TestSubjects.over("write-through (log property)", TestSubjects.WriteThrough::new, true);
    }
}
