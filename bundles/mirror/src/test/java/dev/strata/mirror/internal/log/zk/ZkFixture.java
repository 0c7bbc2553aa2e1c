package dev.strata.mirror.internal.log.zk;

import dev.strata.api.BlockDevice;
import dev.strata.mirror.internal.io.MirrorTarget;
import dev.strata.testsupport.zk.ZooKeeperServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;

/** A real ZooKeeper server per test class (Debian's package), a fresh log path per test, and helpers. */
abstract class ZkFixture {
    static final long REGION = 64 * 1024;
    static final AtomicInteger PATHS = new AtomicInteger();
    static ZooKeeperServer server;
    final List<AutoCloseable> toClose = new ArrayList<>();
    final String path = "/strata/t" + PATHS.incrementAndGet();

    @BeforeAll
    static void startServer() throws IOException {
        Path dir = Files.createDirectories(Path.of("target", "zk"));
        server = ZooKeeperServer.start(Files.createTempDirectory(dir, "server"));
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    @AfterEach
    void closeAll() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            try {
                toClose.get(i).close();
            } catch (Exception e) {
                // closed by the test already, or made unusable on purpose
            }
        }
    }

    ZkLogConfig config(String node) {
        return new ZkLogConfig(server.connect(), path, node, 2000);
    }

    ZooKeeperLog log(String node) {
        return new ZooKeeperLog(config(node), 0);
    }

    MirrorTarget mirror(String node, ZooKeeperLog log, List<BlockDevice> legs, boolean manual) throws IOException {
        MirrorTarget m = MirrorTarget.open("m-" + node, List.of("a", "b"), legs, log, REGION,
                MirrorTarget.Options.defaults().withManual(manual).withNosync(true).withClearDelayNanos(0));
        toClose.add(m);
        return m;
    }

    /** A plain client of the test, to look at the znodes. */
    ZooKeeper client() throws Exception {
        CountDownLatch up = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(server.connect(), 5000, e -> {
            if (e.getState() == org.apache.zookeeper.Watcher.Event.KeeperState.SyncConnected) {
                up.countDown();
            }
        });
        toClose.add(zk::close);
        if (!up.await(30, TimeUnit.SECONDS)) {
            throw new IOException("no connection to the test's ZooKeeper server");
        }
        return zk;
    }

    /** Expires a log's session from outside, the way ZooKeeper's own tests do: a second client on the same session closes it. */
    void expireSession(ZooKeeperLog log) throws Exception {
        CountDownLatch up = new CountDownLatch(1);
        ZooKeeper twin = new ZooKeeper(server.connect(), 2000, e -> {
            if (e.getState() == org.apache.zookeeper.Watcher.Event.KeeperState.SyncConnected) {
                up.countDown();
            }
        }, log.session.sessionId(), log.session.sessionPassword());
        if (!up.await(30, TimeUnit.SECONDS)) {
            throw new IOException("the twin session did not connect");
        }
        twin.close();
    }

    static void await(String what, BooleanSupplier c) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!c.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
    }
}
