package dev.strata.nbd.testing;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs real NBD clients installed on the machine; a missing one fails the test naming its Debian package. */
public final class Tools {
    private Tools() {
    }

    /** Output and exit status of a finished command. */
    public record Result(int exit, String output) {
    }

    public static Path require(String binary, String debianPackage) {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(File.pathSeparator)) {
            Path p = Path.of(dir, binary);
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        fail(binary + " is not installed: install the Debian package '" + debianPackage + "' (apt-get install "
                + debianPackage + ")");
        return null;
    }

    public static Result run(Path workDir, String... command) throws IOException, InterruptedException {
        return runWithin(300, workDir, command);
    }

    /** Runs and fails the test if the command does not finish within {@code seconds}. */
    public static Result runWithin(long seconds, Path workDir, String... command)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(Arrays.asList(command));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        if (workDir != null) {
            pb.directory(workDir.toFile());
        }
        Path out = Files.createTempFile("nbd-tool", ".out");
        pb.redirectOutput(out.toFile());
        Process p = pb.start();
        if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            p.waitFor(30, TimeUnit.SECONDS);
            fail(String.join(" ", cmd) + " did not finish within " + seconds + " s:\n" + Files.readString(out));
        }
        String text = Files.readString(out, StandardCharsets.UTF_8);
        Files.deleteIfExists(out);
        return new Result(p.exitValue(), text);
    }

    /** Runs and asserts exit status 0. */
    public static String ok(Path workDir, String... command) throws IOException, InterruptedException {
        Result r = run(workDir, command);
        assertTrue(r.exit() == 0, String.join(" ", command) + " exited with " + r.exit() + ":\n" + r.output());
        return r.output();
    }
}
