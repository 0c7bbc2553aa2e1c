package dev.strata.itests.blackbox;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.junit.Test;

import dev.strata.itests.StrataOptions;

/**
 * examples/embedded, built by the reactor, run as its own JVM on Felix and then on Equinox: the
 * host application starts the framework, creates backing0 + cache0 -> wb0 through DeviceManager
 * from Java and exports wb0 over NBD; qemu-io verifies the data; the host stops cleanly on
 * "stop", and a second run over the same files finds what was written (writeboost recovered it).
 */
public class EmbeddedExampleIT {
    private static final long MiB = 1L << 20;

    @Test
    public void felix() throws Exception {
        run("felix", "org.apache.felix.framework");
    }

    @Test
    public void equinox() throws Exception {
        run("equinox", "org.eclipse.osgi");
    }

    private void run(String framework, String frameworkBsn) throws Exception {
        Clients.require("qemu-io");
        Path work = StrataOptions.workDir("embedded-" + framework);
        try (Host host = Host.start(work, framework, 1)) {
            assertTrue(host.ready, host.ready.endsWith("on " + frameworkBsn));
            String uri = Clients.uri(host.port, "wb0");
            Clients.qemuIo(work, uri, 64 * MiB, 0);
            Clients.run(work, "qemu-io", "-f", "raw", "-c", "write -P 0xc7 " + 40 * MiB + " 2M", uri).ok();
            host.stop();
        }
        try (Host host = Host.start(work, framework, 2)) {
            Clients.run(work, "qemu-io", "-f", "raw", "-c", "read -P 0xc7 " + 40 * MiB + " 2M", Clients.uri(host.port, "wb0")).ok();
            host.stop();
        }
    }

    /** One run of the host application as a process. */
    private static final class Host implements AutoCloseable {
        final Process process;
        final Path err;
        final int port;
        final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        String ready;

        private Host(Process process, Path err, int port) {
            this.process = process;
            this.err = err;
            this.port = port;
        }

        static Host start(Path work, String framework, int run) throws Exception {
            String cp = String.join(File.pathSeparator, List.of(property("strata.example.embedded"),
                    property("strata.framework." + framework), property("strata.api.jar"), property("strata.slf4j.api"),
                    property("strata.slf4j.simple")));
            int port = Strata.freePort();
            Path err = work.resolve("host-" + run + ".err");
            Path java = Path.of(System.getProperty("java.home"), "bin", "java");
            Process p = new ProcessBuilder(java.toString(), "-cp", cp, "dev.strata.examples.embedded.HostApp",
                    StrataOptions.distribution().resolve("bundle").toString(), work.toString(), String.valueOf(port))
                    .directory(work.toFile()).redirectError(err.toFile()).start();
            Host h = new Host(p, err, port);
            Thread reader = new Thread(() -> {
                try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String line; (line = in.readLine()) != null;) {
                        h.lines.add(line);
                    }
                } catch (Exception e) {
                    h.lines.add("(stdout unreadable: " + e.getMessage() + ")");
                }
            }, "host-stdout");
            reader.setDaemon(true);
            reader.start();
            h.ready = h.next("ready", Strata.START_SECONDS);
            return h;
        }

        String next(String prefix, long seconds) throws Exception {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            while (true) {
                String line = lines.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (line == null) {
                    fail("the host printed no '" + prefix + "' line within " + seconds + " s (alive: " + process.isAlive()
                            + ")\n--- stderr:\n" + Files.readString(err));
                }
                if (line.startsWith(prefix)) {
                    return line;
                }
            }
        }

        void stop() throws Exception {
            OutputStream in = process.getOutputStream();
            in.write("stop\n".getBytes(StandardCharsets.UTF_8));
            in.flush();
            next("stopped", Strata.STOP_SECONDS);
            assertTrue("the host did not exit", process.waitFor(Strata.STOP_SECONDS, TimeUnit.SECONDS));
            String stderr = Files.readString(err);
            assertEquals("exit status; stderr:\n" + stderr, 0, process.exitValue());
            assertFalse("a stack trace or error on stderr:\n" + stderr, stderr.contains("Exception") || stderr.contains("ERROR"));
        }

        @Override
        public void close() {
            Strata.kill(process);
        }

        private static String property(String name) {
            String v = System.getProperty(name);
            if (v == null) {
                throw new IllegalStateException("system property " + name + " is not set (run through Maven)");
            }
            return v;
        }
    }
}
