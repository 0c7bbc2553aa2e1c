package dev.strata.mirror.internal.log.zk;

import dev.strata.api.BlockDevice;
import dev.strata.mirror.internal.io.MirrorTarget;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;

/**
 * One node of {@link ClusterProcessTest}, in a process of its own: a mirror over the two shared
 * leg files with the {@code zookeeper:} log, writing 4 KiB blocks (offset, sequence) into its own
 * regions until it is killed, and printing {@code ACK offset seq} for every acknowledged write.
 *
 * <p>Arguments: {@code CONNECT PATH NODE LEG_A LEG_B SIZE FIRST_REGION LAST_REGION}.
 */
public final class ClusterNodeMain {
    private ClusterNodeMain() {
    }

    public static void main(String[] args) throws Exception {
        long size = Long.parseLong(args[5]);
        int first = Integer.parseInt(args[6]);
        int last = Integer.parseInt(args[7]);
        BlockDevice a = new FileLeg(Path.of(args[3]), size);
        BlockDevice b = new FileLeg(Path.of(args[4]), size);
        ZooKeeperLog log = new ZooKeeperLog(new ZkLogConfig(args[0], args[1], args[2], 2000), 0);
        MirrorTarget m = MirrorTarget.open("m-" + args[2], List.of("a", "b"), List.of(a, b), log, ZkFixture.REGION,
                MirrorTarget.Options.defaults().withNosync(true).withClearDelayNanos(200_000_000L));
        PrintStream out = System.out;
        out.println("READY");
        out.flush();
        Random rnd = new Random(args[2].hashCode());
        int blocksPerRegion = (int) (ZkFixture.REGION / 4096);
        for (long seq = 1;; seq++) {
            long off = (first + rnd.nextInt(last - first + 1)) * ZkFixture.REGION + rnd.nextInt(blocksPerRegion) * 4096L;
            m.write(off, ByteBuffer.allocate(4096).putLong(0, off).putLong(8, seq), 0);
            out.println("ACK " + off + " " + seq);
            if (seq % 8 == 0) {
                m.flush();
                out.println("FLUSHED " + seq);
            }
            out.flush();
        }
    }
}
