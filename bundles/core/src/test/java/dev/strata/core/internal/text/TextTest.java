package dev.strata.core.internal.text;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

import dev.strata.api.DeviceState;

class TextTest {
    @Test
    void humanSizes() {
        assertEquals("0 B", Text.size(0));
        assertEquals("512 B", Text.size(512));
        assertEquals("1.0 KiB", Text.size(1024));
        assertEquals("1.5 KiB", Text.size(1536));
        assertEquals("1.0 GiB", Text.size(1L << 30));
        assertEquals("3.5 TiB", Text.size(7L << 39));
        assertEquals("7.9 EiB", Text.size(Long.MAX_VALUE)); // 2^63 - 1 bytes: rounded down, never up
        assertEquals("1023.9 MiB", Text.size((1L << 30) - 8192)); // not "1024.0 MiB" (a trial read it as 1 GiB)
        assertEquals("63.7 MiB", Text.size(66_794_700));
    }

    @Test
    void blockCountsForASentence() {
        assertEquals("1 dirty block", Text.blocks(1, "dirty"));
        assertEquals("8,192 dirty blocks", Text.blocks(8192, "dirty"));
        assertEquals("0 blocks", Text.blocks(0, ""));
    }

    @Test
    void oneSpellingPerState() {
        assertEquals("active", Text.label(DeviceState.ACTIVE));
        assertEquals("waiting-for-target", Text.label(DeviceState.WAITING_FOR_TARGET));
    }
}
