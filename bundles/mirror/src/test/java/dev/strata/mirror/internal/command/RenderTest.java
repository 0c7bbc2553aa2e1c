package dev.strata.mirror.internal.command;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;

class RenderTest {

    private static MirrorStatus status(String session) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("state", "active");
        m.put("log", "zookeeper:127.0.0.1:21899/bb8/mz");
        m.put("region_size", "524288");
        m.put("leg.la", "in_sync");
        m.put("leg.lb", "in_sync");
        m.put("zk_session", session);
        m.put("zk_paused", "3");
        return MirrorStatus.of("mz", m);
    }

    @Test
    void aZooKeeperSessionThatIsNotAMemberIsSaidWritesWaitForIt() {
        // an ensemble outage: writes hung for up to 120 s while mirror:status looked as usual
        String down = Render.status(status("disconnected"));
        assertTrue(down.contains("  ! ZooKeeper session disconnected: writes wait for it (at most 120 s each, 3 have waited),"
                + " reads go on; is 127.0.0.1:21899 up?"), down);
        assertFalse(Render.status(status("member")).contains("ZooKeeper session"), "a member: nothing to say");
        assertTrue(Render.status(status("expired")).contains("! ZooKeeper session expired"));
    }
}
