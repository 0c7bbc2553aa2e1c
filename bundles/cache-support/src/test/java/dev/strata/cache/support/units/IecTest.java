package dev.strata.cache.support.units;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class IecTest {
    @Test
    void aDevicesSizeIsRoundedDown() {
        assertEquals("8.0 MiB", Iec.size(8L << 20));
        assertEquals("16.9 MiB", Iec.size((17L << 20) - 1));
        assertEquals("1.5 KiB", Iec.size(1536));
        assertEquals("1023 bytes", Iec.size(1023));
        assertEquals("1.0 GiB", Iec.size(1L << 30));
        assertEquals("7.9 EiB", Iec.size(Long.MAX_VALUE));
    }

    @Test
    void aNeedIsExactOrRoundedUp() {
        assertEquals("17 MiB", Iec.atLeast(17L << 20));
        assertEquals("17.1 MiB", Iec.atLeast((17L << 20) + 1));
        assertEquals("4 KiB", Iec.atLeast(4096));
        assertEquals("512 bytes", Iec.atLeast(512));
    }
}
