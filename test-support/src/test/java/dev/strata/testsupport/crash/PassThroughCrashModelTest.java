package dev.strata.testsupport.crash;

/** The crash model property on a correct pass-through target: must find nothing. */
class PassThroughCrashModelTest extends CrashModelProperties {
    @Override
    protected CrashTestSubject subject() {
        return TestSubjects.over("pass-through", TestSubjects.PassThrough::new, false);
    }
}
