package dev.strata.testkit.internal.spindle;

import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Target;
import dev.strata.testkit.internal.common.FakeSleeper;
import dev.strata.testsupport.crash.CrashableDevice;
import dev.strata.testsupport.target.SimpleTargetContext;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class SpindleTargetTest {
    private final CrashableDevice disk = new CrashableDevice("disk", 1 << 20, 4096);

    @Test
    void requestsAreSerializedOnTheActuatorTimeline() throws Exception {
        FakeSleeper clock = new FakeSleeper();
        DiskModel.Params p = new DiskModel.Params(7200, 4_000_000, 500_000, 100e6, 1 << 20, 0);
        SpindleTarget t = new SpindleTarget("sp0", disk, new DiskModel(p), clock);
        // three sequential 1 MB-ish requests issued at the same instant complete one after another
        long each = Math.round(65536 * 1e9 / 100e6);
        t.write(0, ByteBuffer.allocate(65536), 0);
        long first = clock.waits().get(0);
        t.write(65536, ByteBuffer.allocate(65536), 0);
        t.write(131072, ByteBuffer.allocate(65536), 0);
        assertEquals(List.of(first, first + each, first + 2 * each), clock.waits());
        // once the clock has passed the busy time, a request starts at once
        clock.advance(first + 3 * each + 1_000_000);
        t.read(196608, ByteBuffer.allocate(65536));
        assertEquals(each, (long) clock.waits().get(3));
        assertEquals("4", t.status().get("requests"));
    }

    @Test
    void realSpindlePassesDataThrough() throws Exception {
        Target t = new SpindleFactory().create(SimpleTargetContext.of("sp0", "device=disk rpm=15000 seek_ms=0.2 transfer_mb_s=1000")
                .with("disk", disk));
        byte[] data = new byte[8192];
        new java.util.Random(2).nextBytes(data);
        t.write(8192, ByteBuffer.wrap(data), 0);
        ByteBuffer back = ByteBuffer.allocate(8192);
        t.read(8192, back);
        assertArrayEquals(data, back.array());
        t.flush();
        assertEquals("3", t.status().get("requests"));
    }

    @Test
    void badArgumentsAreOneClearLine() {
        SpindleFactory f = new SpindleFactory();
        String[][] cases = {
            {"rpm=0", "spindle: rpm=0 is out of range; allowed 1 to 100000"},
            {"seek_ms=-1", "spindle: seek_ms=-1 is out of range; allowed 0 to 10000 ms"},
            {"seek_ms=2 track_to_track_ms=3", "spindle: track_to_track_ms=3.0 is longer than seek_ms=2.0; the average seek cannot be shorter than the shortest"},
            {"transfer_mb_s=fast", "spindle: transfer_mb_s=fast is not a number"},
            {"heads=4", "spindle: unknown argument 'heads'; allowed: capacity, device, rpm, seed, seek_ms, track_to_track_ms, transfer_mb_s"},
        };
        for (String[] c : cases) {
            assertEquals(c[1], assertThrows(InvalidArgumentException.class,
                    () -> f.create(SimpleTargetContext.of("sp0", "device=disk " + c[0]).with("disk", disk))).getMessage(), c[0]);
        }
    }
}
