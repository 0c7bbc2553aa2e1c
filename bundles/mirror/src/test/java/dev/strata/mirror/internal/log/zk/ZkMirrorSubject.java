package dev.strata.mirror.internal.log.zk;

import dev.strata.api.BlockDevice;
import dev.strata.mirror.internal.io.MirrorTarget;
import dev.strata.testsupport.crash.CrashTestSubject;
import dev.strata.testsupport.crash.Workload;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;

/**
 * A two-leg mirror with a {@code zookeeper:} log over crashable legs (1 MiB, 8 KiB regions), for
 * the crash model. A crash cuts the legs' power and ends the node's session without a goodbye (as
 * a killed process); the restarted node opens the same path and node. The log lives on the real
 * ZooKeeper server, which does not crash here (it is another machine).
 *
 * <p>Offline check: every region the node's chunk znode holds clean reads the same on both legs;
 * and copying the dirty regions from leg a (what resync does) makes the legs equal.
 */
final class ZkMirrorSubject implements CrashTestSubject {
    static final long REGION = 8192;
    static final long LEG = 1 << 20;
    static final AtomicInteger PATHS = new AtomicInteger();
    private final String connect;
    private final ZooKeeper observer;
    /** A new path at every {@link #create}: each sequence starts with a new log (one subject runs many sequences). */
    private String path;
    private final AtomicLong clock = new AtomicLong();
    private ZooKeeperLog current;

    ZkMirrorSubject(String connect, ZooKeeper observer) {
        this.connect = connect;
        this.observer = observer;
    }

    @Override
    public String name() {
        return "mirror-zookeeper-log";
    }

    @Override
    public List<DeviceSpec> devices() {
        return List.of(new DeviceSpec("a", LEG, 4096), new DeviceSpec("b", LEG, 4096));
    }

    @Override
    public BlockDevice create(List<BlockDevice> d) throws IOException {
        path = "/crash/s" + PATHS.incrementAndGet();
        return open(d);
    }

    @Override
    public BlockDevice reopen(List<BlockDevice> d) throws IOException {
        return open(d);
    }

    private MirrorTarget open(List<BlockDevice> d) throws IOException {
        current = new ZooKeeperLog(new ZkLogConfig(connect, path, "n", 2000), 0);
        return MirrorTarget.open("m", List.of("a", "b"), List.of(d.get(0), d.get(1)), current, REGION,
                MirrorTarget.Options.defaults().withManual(true).withNosync(true).withClock(clock::get));
    }

    /** The process died: its session ends with it, nothing is committed or cleared on the way out. */
    @Override
    public void abandon(BlockDevice target) {
        current.session.close();
    }

    @Override
    public void background(BlockDevice target) throws IOException {
        MirrorTarget m = (MirrorTarget) target;
        m.resyncRunOnce(4);
        clock.addAndGet(4_000_000_000L);
        m.clearerRunOnce();
    }

    @Override
    public void checkOffline(List<BlockDevice> d) throws IOException {
        byte[] a = image(d.get(0));
        byte[] b = image(d.get(1));
        int regions = (int) (LEG / REGION);
        BitSet dirty = new BitSet();
        try {
            byte[] chunk = observer.getData(new ZnodeLayout(path).chunk("n", 0), false, null);
            ZnodeLayout.readChunk(chunk, 0, regions, dirty);
        } catch (KeeperException.NoNodeException e) {
            // no marks: the node never joined or stopped cleanly with nothing marked
        } catch (KeeperException e) {
            throw new IOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
        for (int r = 0; r < regions; r++) {
            int from = (int) (r * REGION);
            int to = (int) (from + REGION);
            if (!dirty.get(r) && !Arrays.equals(a, from, to, b, from, to)) {
                throw new AssertionError("region " + r + " is clean in ZooKeeper but the legs differ there");
            }
            if (dirty.get(r)) {
                System.arraycopy(a, from, b, from, (int) REGION); // what resync does
            }
        }
        if (!Arrays.equals(a, b)) {
            throw new AssertionError("after resyncing the dirty regions the legs still differ");
        }
    }

    private static byte[] image(BlockDevice d) throws IOException {
        byte[] b = new byte[Math.toIntExact(d.size())];
        d.read(0, ByteBuffer.wrap(b));
        return b;
    }

    @Override
    public Workload workload() {
        return Workload.DEFAULT;
    }
}
