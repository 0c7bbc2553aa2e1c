package dev.strata.core.internal.command;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceState;

/** {@code dev:list --tree}: a stack drawn from its top device down, each lower device with the argument naming it. */
class TreeTest {
    static final long GIB = 1L << 30;

    private static DeviceInfo dev(String name, String type, Map<String, String> args, long size, List<String> lower,
            List<String> holders) {
        return new DeviceInfo(name, type, args, size, 4096, DeviceState.ACTIVE, lower, holders);
    }

    @Test
    void writeboostOverReadcacheOverAnNbdImport() {
        List<DeviceInfo> devices = List.of(
                dev("disk1", "writeboost", Map.of("backing", "disk1.readcache", "cache", "ssd1"), 4 * GIB,
                        List.of("disk1.readcache", "ssd1"), List.of("nbd:disk1")),
                dev("disk1.readcache", "readcache", Map.of("origin", "disk1.nbd", "cache", "ssd2"), 4 * GIB,
                        List.of("disk1.nbd", "ssd2"), List.of("disk1")),
                dev("disk1.nbd", "nbd", Map.of("uri", "nbd://10.0.0.2/disk1"), 4 * GIB, List.of(),
                        List.of("disk1.readcache")),
                dev("ssd1", "file", Map.of("path", "ssd1.img"), GIB, List.of(), List.of("disk1")),
                dev("ssd2", "file", Map.of("path", "ssd2.img"), GIB, List.of(), List.of("disk1.readcache")),
                dev("spare", "memory", Map.of("size", "1G"), GIB, List.of(), List.of()));
        assertEquals("""
                DEVICE              AS       TYPE        SIZE     STATE   EXPORTS    WHY
                disk1               -        writeboost  4.0 GiB  active  nbd:disk1  -
                ├─ disk1.readcache  backing  readcache   4.0 GiB  active  -          -
                │  ├─ disk1.nbd     origin   nbd         4.0 GiB  active  -          -
                │  └─ ssd2          cache    file        1.0 GiB  active  -          -
                └─ ssd1             cache    file        1.0 GiB  active  -          -
                spare               -        memory      1.0 GiB  active  -          -
                """, Tree.render(devices, false));
    }

    /** A window shared by two devices is drawn under each; the leaf's own export is listed with it. */
    @Test
    void aSharedDeviceUnderTwo() {
        List<DeviceInfo> devices = List.of(
                dev("a", "linear", Map.of("device", "disk", "offset", "0"), GIB, List.of("disk"), List.of()),
                dev("b", "linear", Map.of("device", "disk", "offset", "1G"), GIB, List.of("disk"), List.of()),
                dev("disk", "file", Map.of("path", "d.img"), 2 * GIB, List.of(), List.of("a", "b", "nbd:ro")));
        assertEquals("""
                DEVICE   AS      TYPE    SIZE     STATE   EXPORTS  WHY
                a        -       linear  1.0 GiB  active  -        -
                └─ disk  device  file    2.0 GiB  active  nbd:ro   -
                b        -       linear  1.0 GiB  active  -        -
                └─ disk  device  file    2.0 GiB  active  nbd:ro   -
                """, Tree.render(devices, false));
    }
}
