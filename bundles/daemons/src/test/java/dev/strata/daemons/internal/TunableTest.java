package dev.strata.daemons.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.strata.api.InvalidArgumentException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TunableTest {
    private static final Tunable PCT = new Tunable("x", "pct", 0, 100, 10, "percent of something");
    private static final Tunable SW = Tunable.flag("x", "sw", true, "switch: something on or off");

    @Test
    void aValueOutOfRangeIsOneLineNamingTheRange() {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> PCT.parse("101"));
        assertEquals("x: pct=101 is out of range; allowed 0 to 100 (percent of something)", e.getMessage());
        e = assertThrows(InvalidArgumentException.class, () -> PCT.parse("ten"));
        assertEquals("x: pct=ten is not a whole number; allowed 0 to 100 (percent of something)", e.getMessage());
        e = assertThrows(InvalidArgumentException.class, () -> SW.parse("maybe"));
        assertEquals("x: sw=maybe is not a switch; allowed true or false (switch: something on or off)", e.getMessage());
    }

    @Test
    void valuesParse() {
        assertEquals(0, PCT.parse(" 0 "));
        assertEquals(100, PCT.parse("100"));
        assertEquals(1, SW.parse("true"));
        assertEquals(0, SW.parse("off"));
    }

    @Test
    void settingsTakeKnownKeysIgnoreOthersAndChangeNothingOnABadValue() {
        Settings s = Settings.of(List.of(PCT, SW), Map.of("pct", "20", "other", "whatever"));
        assertEquals(20, s.get(PCT));
        assertEquals(true, s.flag(SW));
        assertNull(s.with("other", "1"));
        assertThrows(InvalidArgumentException.class, () -> s.with("pct", "-1"));
        assertEquals(20, s.get(PCT));
        Settings t = s.with("sw", "false");
        assertEquals(Map.of("pct", "20", "sw", "false"), t.asMap());
        assertEquals(true, s.flag(SW), "the old value is untouched");
    }
}
