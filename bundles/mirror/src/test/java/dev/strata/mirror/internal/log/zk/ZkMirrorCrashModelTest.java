package dev.strata.mirror.internal.log.zk;

import dev.strata.testsupport.crash.CrashModelProperties;
import dev.strata.testsupport.crash.CrashTestSubject;
import dev.strata.testsupport.zk.ZooKeeperServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;

/**
 * The crash model over the {@code zookeeper:} log of a real server: random I/O, crashes in every
 * mode (the legs lose power, the node's session dies with it) and restarts; after each crash the
 * marks in ZooKeeper cover every region where the legs differ, and against the reference model no
 * acknowledged durable write is lost. The property's tries, then seeded sequences until the
 * mirror crashed at least {@value CrashModelProperties#MIN_CRASHES} times (ten times more with
 * {@code -Dstrata.soak=true}).
 *
 * <p>One server for the class, which never crashes here (it is another machine), so its
 * transaction log is not synced per request ({@link ZooKeeperServer#startUnsynced}): the fsync per
 * commit was most of the run and the check is about the node's side, not the server's disk.
 */
class ZkMirrorCrashModelTest extends CrashModelProperties {
    static ZooKeeperServer server;
    static ZooKeeper observer;

    @BeforeContainer
    static void start() throws Exception {
        server = ZooKeeperServer.startUnsynced(Files.createTempDirectory(Files.createDirectories(Path.of("target", "zk")), "crash"));
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

    @Override
    protected CrashTestSubject subject() {
        // a fresh path per sequence (ZkMirrorSubject numbers them); before the server is up only the workload is asked for
        return new ZkMirrorSubject(server == null ? "127.0.0.1:1" : server.connect(), observer);
    }
}
