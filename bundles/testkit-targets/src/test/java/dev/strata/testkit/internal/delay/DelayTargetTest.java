package dev.strata.testkit.internal.delay;

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

class DelayTargetTest {
    private final CrashableDevice disk = new CrashableDevice("disk", 64 * 1024, 512);

    @Test
    void eachKindOfRequestWaitsItsOwnDelay() throws Exception {
        FakeSleeper sleeper = new FakeSleeper();
        DelayTarget t = new DelayTarget("d0", disk, new DelayTarget.Delays(2_000_000, 5_000_000, 250_000), sleeper);
        t.read(0, ByteBuffer.allocate(512));
        t.write(0, ByteBuffer.allocate(512), 0);
        t.writeZeroes(0, 512, 0);
        t.discard(0, 512);
        t.flush();
        assertEquals(List.of(2_000_000L, 5_000_000L, 5_000_000L, 5_000_000L, 250_000L), sleeper.waits());
        t.message("read_ms", "0.5");
        t.read(0, ByteBuffer.allocate(512));
        assertEquals(500_000L, sleeper.waits().get(5));
        assertEquals("0.5", t.status().get("read_ms"));
        assertEquals("delay: read_ms=-1 is out of range; allowed 0 to 60000 ms",
                assertThrows(InvalidArgumentException.class, () -> t.message("read_ms", "-1")).getMessage());
    }

    @Test
    void realDelaysPassDataThrough() throws Exception {
        Target t = new DelayFactory().create(SimpleTargetContext.of("d0", "device=disk read_ms=1 write_ms=1 flush_ms=1").with("disk", disk));
        byte[] data = new byte[1024];
        new java.util.Random(1).nextBytes(data);
        t.write(2048, ByteBuffer.wrap(data), 0);
        t.flush();
        ByteBuffer back = ByteBuffer.allocate(1024);
        t.read(2048, back);
        assertArrayEquals(data, back.array());
        assertEquals("1", t.status().get("flushes"));
    }

    @Test
    void badArgumentsAreOneClearLine() {
        DelayFactory f = new DelayFactory();
        assertEquals("delay: write_ms=abc is not a number of milliseconds", assertThrows(InvalidArgumentException.class,
                () -> f.create(SimpleTargetContext.of("d0", "device=disk write_ms=abc").with("disk", disk))).getMessage());
        assertEquals("delay: flush_ms=-3 is out of range; allowed 0 to 60000 ms", assertThrows(InvalidArgumentException.class,
                () -> f.create(SimpleTargetContext.of("d0", "device=disk flush_ms=-3").with("disk", disk))).getMessage());
        assertEquals("delay: missing argument 'device=DEVICE'",
                assertThrows(InvalidArgumentException.class, () -> f.lowerDevices(java.util.Map.of())).getMessage());
    }
}
