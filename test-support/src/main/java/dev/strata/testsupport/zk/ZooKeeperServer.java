package dev.strata.testsupport.zk;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real ZooKeeper server for tests: Debian's {@code zookeeper} package (its jars in
 * {@code /usr/share/java}) run as a standalone server in a child JVM, on 127.0.0.1 and an
 * ephemeral port, with its own data directory and a short tick (sessions of 1–20 s). Never a
 * mock (issue 15). {@link #stop} and {@link #start} again keep the port and the data, so a test
 * can restart the server under load.
 */
public final class ZooKeeperServer implements AutoCloseable {
    /** Where Debian's {@code zookeeper} package (libzookeeper-java and its dependencies) puts its jars. */
    public static final Path JARS = Path.of(System.getProperty("strata.zookeeper.jars", "/usr/share/java"));
    private static final String[] CLASS_PATH = {"zookeeper.jar", "zookeeper-jute.jar", "slf4j-api.jar", "slf4j-simple.jar"};

    private final Path dir;
    private final boolean forceSync;
    private int port;
    private Process process;

    private ZooKeeperServer(Path dir, boolean forceSync) {
        this.dir = dir;
        this.forceSync = forceSync;
    }

    /** Starts a server with its data under {@code dir} (created); its transaction log is synced per write. */
    public static ZooKeeperServer start(Path dir) throws IOException {
        return start(dir, true);
    }

    /**
     * A server whose transaction log is not synced per write ({@code forceSync=no}): for tests in
     * which the server never crashes (a crash model of the client side), where an fsync per
     * request on a shared disk would be most of the run. Never restart such a server with
     * {@link #stop} to test durability: it may lose its last writes.
     */
    public static ZooKeeperServer startUnsynced(Path dir) throws IOException {
        return start(dir, false);
    }

    private static ZooKeeperServer start(Path dir, boolean forceSync) throws IOException {
        for (String jar : CLASS_PATH) {
            if (!Files.isRegularFile(JARS.resolve(jar))) {
                throw new IllegalStateException(JARS.resolve(jar) + " is missing: install Debian's zookeeper package"
                        + " (apt-get install zookeeper; .ci/run does)");
            }
        }
        ZooKeeperServer s = new ZooKeeperServer(dir, forceSync);
        IOException last = null;
        for (int attempt = 0; attempt < 5; attempt++) {
            s.port = freePort();
            try {
                s.start();
                return s;
            } catch (IOException e) {
                last = e; // the port was taken in between: another one
                s.stop();
            }
        }
        throw last;
    }

    /** {@code 127.0.0.1:PORT}. */
    public String connect() {
        return "127.0.0.1:" + port;
    }

    public int port() {
        return port;
    }

    public boolean running() {
        return process != null && process.isAlive();
    }

    /** (Re)starts the server on the same port with the same data; returns once it answers. */
    public synchronized void start() throws IOException {
        if (running()) {
            return;
        }
        Path data = Files.createDirectories(dir.resolve("data"));
        Path cfg = dir.resolve("zoo.cfg");
        Files.writeString(cfg, String.join("\n",
                "tickTime=500",
                "initLimit=10",
                "syncLimit=5",
                "dataDir=" + data,
                "clientPort=" + port,
                "clientPortAddress=127.0.0.1",
                "minSessionTimeout=1000",
                "maxSessionTimeout=20000",
                "admin.enableServer=false",
                "4lw.commands.whitelist=ruok,srvr",
                "maxClientCnxns=0",
                "forceSync=" + (forceSync ? "yes" : "no"),
                ""));
        List<String> cp = new ArrayList<>();
        for (String jar : CLASS_PATH) {
            cp.add(JARS.resolve(jar).toString());
        }
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-Dzookeeper.jmx.log4j.disable=true",
                "-Dzookeeper.forceSync=" + (forceSync ? "yes" : "no"),
                "-cp", String.join(":", cp),
                "org.apache.zookeeper.server.ZooKeeperServerMain", cfg.toString());
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("server.log").toFile()));
        process = pb.start();
        Process p = process;
        Runtime.getRuntime().addShutdownHook(new Thread(p::destroyForcibly));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            if (!p.isAlive()) {
                throw new IOException("the ZooKeeper server exited with " + p.exitValue() + "; see " + dir.resolve("server.log"));
            }
            if ("imok".equals(fourLetter("ruok"))) {
                return;
            }
            try {
                p.waitFor(100, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while starting ZooKeeper");
            }
        }
        throw new IOException("the ZooKeeper server did not answer within 60 s; see " + dir.resolve("server.log"));
    }

    /** Stops the server (SIGKILL: as a crash; its transaction log is synced per write, so nothing is lost). */
    public synchronized void stop() {
        Process p = process;
        process = null;
        if (p == null) {
            return;
        }
        p.destroyForcibly();
        try {
            p.waitFor(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A four-letter command's answer, or null if the server does not answer. */
    public String fourLetter(String word) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1000);
            s.setSoTimeout(2000);
            OutputStream out = s.getOutputStream();
            out.write(word.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            return new String(in.readAllBytes(), StandardCharsets.US_ASCII).trim();
        } catch (IOException e) {
            return null;
        }
    }

    @Override
    public void close() {
        stop();
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
