package dev.strata.mirror.internal.log.zk;

import java.io.IOException;
import java.util.List;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.ZooDefs;
import dev.strata.mirror.internal.log.zk.ZkCall.Conflict;
import dev.strata.mirror.internal.log.zk.ZkCall.Fenced;

/** A log's first znodes: made by the first node to open it, checked by every later one. */
final class LogGeometry {
    private LogGeometry() {
    }

    private static void createIfMissing(ZooKeeperLog log, String path, long deadline) throws IOException {
        try {
            log.call(h -> h.create(path, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT), deadline);
        } catch (Conflict e) {
            // there already
        }
    }

    /** Creates the geometry and leg state, or checks them. Returns whether this node made the log. */
    static boolean createOrCheck(ZooKeeperLog log, int legs, long regionSize, long regions, long legsId, long deadline) throws IOException {
        ZnodeLayout z = log.z;
        byte[] want = ZnodeLayout.geometryBytes(legs, regionSize, regions, legsId);
        while (true) {
            byte[] have;
            try {
                have = log.call(h -> h.getData(z.geometry(), false, null), deadline);
            } catch (Fenced missing) {
                // a new log: its parents first (a log with a geometry has them: four requests fewer per start)
                for (String p : z.parents()) {
                    createIfMissing(log, p, deadline);
                }
                try {
                    log.call(h -> h.multi(List.of(
                            Op.create(z.geometry(), want, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT),
                            Op.create(z.legs(), ZnodeLayout.legsBytes((1 << legs) - 1), ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT),
                            Op.create(z.recovering(), new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT))),
                            deadline);
                    return true;
                } catch (Conflict raced) {
                    continue; // another node made it first: check theirs
                }
            }
            ZnodeLayout.checkGeometry(have, z.geometry(), log.describe(), legs, regionSize, regions, legsId);
            return false;
        }
    }

}
