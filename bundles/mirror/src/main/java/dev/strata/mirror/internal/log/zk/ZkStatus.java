package dev.strata.mirror.internal.log.zk;

import dev.strata.mirror.internal.log.RegionLog.LegShare;
import java.util.LinkedHashMap;
import java.util.Map;

/** The status keys of a {@code zookeeper:} log (docs/mirror.md, "Cluster"). */
final class ZkStatus {
    private ZkStatus() {
    }

    static Map<String, String> of(ZooKeeperLog log, Recoverer recoverer) {
        ZkSession session = log.session;
        Map<String, String> m = new LinkedHashMap<>();
        m.put("zk_node", log.node);
        m.put("zk_session", session.closed() ? "closed" : session.connected() ? (log.joined ? "member" : "rejoining")
                : session.expired() ? "expired" : "disconnected");
        m.put("zk_members", Integer.toString(recoverer.lastMembers()));
        m.put("zk_disconnects", Long.toString(session.disconnects()));
        m.put("zk_session_expiries", Long.toString(session.expiries()));
        m.put("zk_rejoins", Long.toString(log.rejoins));
        m.put("zk_fenced", Long.toString(log.fenced));
        m.put("zk_recovered_nodes", Long.toString(recoverer.recoveredNodes()));
        m.put("zk_recovered_regions", Long.toString(recoverer.recoveredRegions()));
        m.put("zk_multi_splits", Long.toString(log.splits));
        m.put("zk_paused", Long.toString(log.paused.sum()));
        // the other nodes' resyncs held back here, and this node's own published to them (docs/mirror.md, "Cluster")
        m.put("zk_recovering_version", Integer.toString(log.recovering.version()));
        m.put("zk_remote_resync_regions", Integer.toString(log.recovering.heldBack().cardinality()));
        m.put("zk_source_read_regions", Integer.toString(log.recovering.unsynced.regions()));
        m.put("zk_remote_resync_acks", Long.toString(log.recovering.acks()));
        m.put("zk_resync_publications", Long.toString(log.publisher.publications()));
        m.put("zk_resync_waiting_for", log.publisher.waitingNames());
        m.put("zk_resync_fenced_members", Long.toString(log.publisher.fencedMembers()));
        m.put("zk_commits_rechecked", Long.toString(log.recheckedCommits));
        LegShare s = log.legState.current();
        if (s != null) {
            // the leg state the nodes share: in sync, being recovered (every node copies its marks), the recovery's epoch
            m.put("zk_legs_in_sync_mask", Integer.toString(s.inSync()));
            m.put("zk_legs_recovering_mask", Integer.toString(s.recovering()));
            m.put("zk_legs_epoch", Long.toString(s.epoch()));
            m.put("zk_legs_copied_epoch", Long.toString(log.legState.copiedEpoch()));
        }
        return m;
    }
}
