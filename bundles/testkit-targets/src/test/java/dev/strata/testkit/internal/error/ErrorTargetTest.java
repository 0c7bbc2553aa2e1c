package dev.strata.testkit.internal.error;

import dev.strata.api.DeviceIOException;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.OutOfRangeException;
import dev.strata.api.Target;
import dev.strata.testsupport.target.SimpleTargetContext;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ErrorTargetTest {

    @Test
    void everyRequestFailsNamingDeviceAndOffset() throws Exception {
        Target t = new ErrorFactory().create(SimpleTargetContext.of("err0", "size=1M block_size=4096"));
        assertEquals(1 << 20, t.size());
        assertEquals(4096, t.blockSize());
        DeviceIOException e = assertThrows(DeviceIOException.class, () -> t.read(8192, ByteBuffer.allocate(4096)));
        assertEquals("err0", e.device());
        assertEquals(8192, e.offset());
        assertTrue(e.getMessage().startsWith("err0 at offset 8192: read failed"), e.getMessage());
        assertEquals(512, assertThrows(DeviceIOException.class, () -> t.write(512, ByteBuffer.allocate(512), 0)).offset());
        assertEquals(-1, assertThrows(DeviceIOException.class, t::flush).offset());
        assertEquals(1024, assertThrows(DeviceIOException.class, () -> t.discard(1024, 512)).offset());
        assertEquals(0, assertThrows(DeviceIOException.class, () -> t.writeZeroes(0, 512, 0)).offset());
        assertThrows(OutOfRangeException.class, () -> t.read(1 << 20, ByteBuffer.allocate(512)));
        assertEquals("5", t.status().get("errors"));
        t.close();
    }

    @Test
    void badArgumentsAreOneClearLine() {
        ErrorFactory f = new ErrorFactory();
        assertEquals("error: block_size=1024 is not allowed; use 512 or 4096",
                assertThrows(InvalidArgumentException.class, () -> f.create(SimpleTargetContext.of("e", "block_size=1024"))).getMessage());
        assertTrue(assertThrows(InvalidArgumentException.class, () -> f.create(SimpleTargetContext.of("e", "colour=red")))
                .getMessage().startsWith("error: unknown argument 'colour'"));
        assertEquals("error: size=6144 is not a multiple of block_size 4096",
                assertThrows(InvalidArgumentException.class, () -> f.create(SimpleTargetContext.of("e", "size=6144 block_size=4096"))).getMessage());
    }
}
