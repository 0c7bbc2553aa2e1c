package dev.strata.itests;

import dev.strata.testsupport.zk.ZooKeeperServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The driver side's ZooKeeper server for Pax Exam tests (never loaded inside the framework, where
 * test-support is not a bundle): started once per work directory, stopped when the JVM exits.
 */
final class TestZooKeeper {
    private TestZooKeeper() {
    }

    /** Starts a server under {@code dir}; returns {@code 127.0.0.1:PORT}. */
    static synchronized String start(Path dir) throws IOException {
        ZooKeeperServer s = ZooKeeperServer.start(Files.createDirectories(dir));
        Runtime.getRuntime().addShutdownHook(new Thread(s::stop));
        return s.connect();
    }
}
