package dev.strata.core.internal.command;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;

import org.junit.jupiter.api.Test;

class RenderTest {
    @Test
    void humanSizes() {
        assertEquals("0 B", Render.size(0));
        assertEquals("512 B", Render.size(512));
        assertEquals("1.0 KiB", Render.size(1024));
        assertEquals("1.5 KiB", Render.size(1536));
        assertEquals("1.0 GiB", Render.size(1L << 30));
        assertEquals("3.5 TiB", Render.size(7L << 39));
        assertEquals("8.0 EiB", Render.size(Long.MAX_VALUE));
    }

    @Test
    void columnsAlign() {
        assertEquals("A    BB\nccc  d\n", Render.table(List.of(new String[] {"A", "BB"}, new String[] {"ccc", "d"})));
    }
}
