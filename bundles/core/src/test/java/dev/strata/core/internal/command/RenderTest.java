package dev.strata.core.internal.command;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;

import org.junit.jupiter.api.Test;

class RenderTest {
    @Test
    void columnsAlign() {
        assertEquals("A    BB\nccc  d\n", Render.table(List.of(new String[] {"A", "BB"}, new String[] {"ccc", "d"})));
    }
}
