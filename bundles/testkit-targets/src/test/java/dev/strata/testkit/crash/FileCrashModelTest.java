package dev.strata.testkit.crash;

import dev.strata.testsupport.crash.CrashModelProperties;
import dev.strata.testsupport.crash.CrashTestSubject;
import net.jqwik.api.lifecycle.AfterContainer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The crash model on the {@code file} driver: process crashes (dropped and reopened from its file). */
class FileCrashModelTest extends CrashModelProperties {
    private static Path dir;

    @Override
    protected synchronized CrashTestSubject subject() {
        if (dir == null) {
            try {
                dir = Files.createTempDirectory("strata-crash-file");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return DriverSubjects.leaf("file", dir);
    }

    @AfterContainer
    static void removeFiles() {
        DriverSubjects.delete(dir);
        dir = null;
    }
}
