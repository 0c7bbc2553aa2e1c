package dev.strata.cache.commands.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Target;
import dev.strata.cache.writeboost.internal.WriteboostFactory;
import dev.strata.testsupport.crash.CrashableDevice;
import dev.strata.testsupport.target.SimpleTargetContext;
import java.nio.ByteBuffer;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** cache:check on a real writeboost cache, through the manager contract: suspended only, then the tool's checks. */
class CheckCommandTest {
    private final CrashableDevice cache = new CrashableDevice("cache0", 17L << 20, 512);
    private final CrashableDevice backing = new CrashableDevice("backing0", 4L << 20, 512);
    private final FakeManager manager = new FakeManager();
    private final CheckCommand cmd = new CheckCommand(manager);
    private Target wb;

    @BeforeEach
    void setUp() throws Exception {
        wb = new WriteboostFactory().create(SimpleTargetContext.of("wb0", "backing=backing0 cache=cache0")
                .with("backing0", backing).with("cache0", cache));
        byte[] data = new byte[4096];
        for (int i = 0; i < 20; i++) {
            data[0] = (byte) i;
            wb.write(i * 8192L, ByteBuffer.wrap(data), 0);
        }
        wb.flush();
        manager.add("wb0", "writeboost", Map.of("backing", "backing0", "cache", "cache0"), wb);
        manager.add("backing0", "memory", Map.of(), new PlainTarget("memory", backing));
    }

    @AfterEach
    void tearDown() throws Exception {
        wb.close();
    }

    @Test
    void refusesAnActiveDeviceThenChecksTheSuspendedOne() throws Exception {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> cmd.check("wb0"));
        assertEquals("wb0 is not suspended: run 'dev:suspend wb0' first (and 'dev:resume wb0' after the check)", e.getMessage());
        manager.suspend("wb0");
        assertEquals("wb0: clean", cmd.check("wb0"));
        manager.resume("wb0");
    }

    @Test
    void namesADamagedSuperblockByte() throws Exception {
        manager.suspend("wb0");
        ByteBuffer sector = ByteBuffer.allocate(512);
        cache.read(0, sector);
        sector.put(100, (byte) (sector.get(100) ^ 0x10));
        cache.write(0, sector.flip(), 0);
        String out = cmd.check("wb0");
        String[] lines = out.split("\n");
        assertEquals(2, lines.length, out);
        assertTrue(lines[0].startsWith("wb0: 1 problem (stop Strata and run strata-tool repair"), out);
        assertTrue(lines[1].startsWith("superblock: byte 100 is damaged"), out);
    }

    @Test
    void aDeviceThatIsNoCacheIsRefusedAsSuchWithoutAskingForASuspend() throws Exception {
        // told to suspend it first, the user would pause the I/O of everything stacked on it, for nothing
        assertEquals("device 'backing0' is a memory device, not a cache",
                assertThrows(InvalidArgumentException.class, () -> cmd.check("backing0")).getMessage());
    }

    @Test
    void badInputIsOneLine() throws Exception {
        assertEquals("no device named 'nope'; dev:list shows the devices",
                assertThrows(InvalidArgumentException.class, () -> cmd.check("nope")).getMessage());
        manager.suspend("backing0");
        assertEquals("device 'backing0' is a memory device, not a cache",
                assertThrows(InvalidArgumentException.class, () -> cmd.check("backing0")).getMessage());
        assertTrue(assertThrows(InvalidArgumentException.class, cmd::check).getMessage().startsWith("usage: cache:check DEVICE"));
    }
}
