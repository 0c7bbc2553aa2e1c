package dev.strata.mirror.internal.log.zk;

import dev.strata.testsupport.crash.CrashModelRunner;
import dev.strata.testsupport.crash.CrashOp;
import dev.strata.testsupport.crash.CrashOps;
import dev.strata.testsupport.crash.CrashStats;
import dev.strata.testsupport.zk.ZooKeeperServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.AfterProperty;
import net.jqwik.api.lifecycle.BeforeContainer;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;

/**
 * The crash model over the {@code zookeeper:} log of a real server: random I/O, crashes in every
 * mode (the legs lose power, the node's session dies with it) and restarts; after each crash the
 * marks in ZooKeeper cover every region where the legs differ, and against the reference model no
 * acknowledged durable write is lost.
 */
class ZkMirrorCrashModelTest {
    static ZooKeeperServer server;
    static ZooKeeper observer;
    private final CrashStats stats = new CrashStats();

    @BeforeContainer
    static void start() throws Exception {
        server = ZooKeeperServer.start(Files.createTempDirectory(Files.createDirectories(Path.of("target", "zk")), "crash"));
        CountDownLatch up = new CountDownLatch(1);
        observer = new ZooKeeper(server.connect(), 10_000, e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                up.countDown();
            }
        });
        if (!up.await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("no connection to the test's ZooKeeper server");
        }
    }

    @AfterContainer
    static void stop() throws Exception {
        observer.close();
        server.close();
    }

    @Property(tries = 80)
    void crashModel(@ForAll("sequences") List<CrashOp> ops) {
        CrashModelRunner.run(new ZkMirrorSubject(server.connect(), observer), ops, stats);
    }

    @Provide
    Arbitrary<List<CrashOp>> sequences() {
        return CrashOps.sequences(new ZkMirrorSubject("127.0.0.1:1", null).workload());
    }

    @AfterProperty
    void report() {
        System.out.println(stats.report("mirror-zookeeper-log"));
    }
}
