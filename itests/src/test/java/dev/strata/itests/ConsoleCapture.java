package dev.strata.itests;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * What the JVM prints to {@code System.out} and {@code System.err} while it is open, still passed
 * on to the real streams. The framework of a Pax Exam test runs in this JVM, so its console
 * (slf4j-simple, Felix's and SCR's own error lines, stack traces) passes through here; each
 * logger looks the stream up at every line (slf4j-simple caches nothing by default).
 */
final class ConsoleCapture implements AutoCloseable {
    private final PrintStream out = System.out;
    private final PrintStream err = System.err;
    private final ByteArrayOutputStream seen = new ByteArrayOutputStream();

    ConsoleCapture() {
        System.setOut(new PrintStream(new Tee(out), true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(new Tee(err), true, StandardCharsets.UTF_8));
    }

    /** Everything printed so far. */
    String text() {
        synchronized (seen) {
            return seen.toString(StandardCharsets.UTF_8);
        }
    }

    /** The lines that report an error or show a stack trace. */
    List<String> errorLines() {
        return text().lines().filter(l -> l.contains("ERROR") || l.contains("Exception") || l.startsWith("\tat ")
                || l.contains("Error:")).toList();
    }

    @Override
    public void close() {
        System.setOut(out);
        System.setErr(err);
    }

    private final class Tee extends OutputStream {
        private final PrintStream real;

        Tee(PrintStream real) {
            this.real = real;
        }

        @Override
        public void write(int b) {
            real.write(b);
            synchronized (seen) {
                seen.write(b);
            }
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            real.write(b, off, len);
            synchronized (seen) {
                seen.write(b, off, len);
            }
        }

        @Override
        public void flush() {
            real.flush();
        }
    }
}
