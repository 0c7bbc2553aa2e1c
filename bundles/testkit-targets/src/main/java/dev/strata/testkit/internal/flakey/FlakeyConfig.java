package dev.strata.testkit.internal.flakey;

import dev.strata.api.BlockDevice;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.TargetArguments;
import dev.strata.testkit.internal.common.Args;

import java.util.EnumSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;

/**
 * The validated arguments of a {@code flakey} target (immutable).
 *
 * @param upNanos      how long the device works normally in each cycle (0: never)
 * @param downNanos    how long it misbehaves in each cycle (0: never)
 * @param modes        what it does while down
 * @param corruptByte  which byte of every logical block is corrupted (-1: none)
 * @param corruptValue the value written there (-1: the byte's bits are flipped)
 * @param regionOffset start of the region where faults apply
 * @param regionLength length of that region
 * @param skip         this many matching requests pass before faults start
 * @param count        at most this many faults (-1: no limit)
 * @param probability  percent of matching requests that fault
 * @param seed         seed of the choice made with {@code probability}
 */
record FlakeyConfig(long upNanos, long downNanos, Set<FaultMode> modes, int corruptByte, int corruptValue,
        long regionOffset, long regionLength, long skip, long count, int probability, long seed) {

    static final String TYPE = "flakey";
    static final Set<String> ARGS = Set.of("device", "up", "down", "mode", "corrupt_byte", "corrupt_value",
            "region_offset", "region_length", "skip", "count", "probability", "seed");
    private static final double MAX_MS = 86_400_000; // a day

    /** Parses and validates everything; {@code lower} is only asked for its geometry. */
    static FlakeyConfig parse(Map<String, String> arguments, BlockDevice lower) {
        TargetArguments a = TargetArguments.of(TYPE, arguments, ARGS);
        a.string("device");
        long up = Args.millis(a, TYPE, "up", 0, MAX_MS);
        long down = Args.millis(a, TYPE, "down", 1000, MAX_MS);
        if (up == 0 && down == 0) {
            throw new InvalidArgumentException("flakey: up=0 and down=0 leave no interval; give up or down a positive number of ms");
        }
        Set<FaultMode> modes = parseModes(a.string("mode", "error"));
        boolean corrupts = modes.contains(FaultMode.CORRUPT_READS) || modes.contains(FaultMode.CORRUPT_WRITES);
        int blockSize = lower.blockSize();
        int corruptByte = -1;
        if (a.has("corrupt_byte")) {
            if (!corrupts) {
                throw new InvalidArgumentException("flakey: corrupt_byte is only used with mode=corrupt_reads or mode=corrupt_writes");
            }
            long n = a.number("corrupt_byte", Long.MIN_VALUE, Long.MAX_VALUE);
            if (n < 0 || n >= blockSize) {
                throw new InvalidArgumentException("flakey: corrupt_byte=" + n + " is beyond the device's " + blockSize
                        + "-byte block; allowed 0 to " + (blockSize - 1));
            }
            corruptByte = (int) n;
        } else if (corrupts) {
            throw new InvalidArgumentException("flakey: mode " + String.join(",", labels(modes)) + " needs corrupt_byte=N (0 to " + (blockSize - 1) + ")");
        }
        int corruptValue = -1;
        if (a.has("corrupt_value")) {
            if (!corrupts) {
                throw new InvalidArgumentException("flakey: corrupt_value is only used with mode=corrupt_reads or mode=corrupt_writes");
            }
            corruptValue = (int) a.number("corrupt_value", 0, 255);
        }
        long regionOffset = a.size("region_offset", 0, 0, lower.size());
        long regionLength = a.size("region_length", lower.size() - regionOffset, 0, Long.MAX_VALUE);
        if (regionOffset % BlockDevice.SECTOR != 0 || regionLength % BlockDevice.SECTOR != 0) {
            throw new InvalidArgumentException("flakey: region_offset and region_length must be multiples of 512");
        }
        if (regionLength == 0 || regionLength > lower.size() - regionOffset) {
            throw new InvalidArgumentException("flakey: region " + regionOffset + "+" + regionLength
                    + " is empty or reaches past the device's " + lower.size() + " bytes");
        }
        long skip = a.number("skip", 0, 0, Long.MAX_VALUE);
        long count = a.number("count", -1, 0, Long.MAX_VALUE);
        int probability = (int) a.number("probability", 100, 0, 100);
        long seed = a.number("seed", 0, Long.MIN_VALUE, Long.MAX_VALUE);
        return new FlakeyConfig(up, down, modes, corruptByte, corruptValue, regionOffset, regionLength, skip, count, probability, seed);
    }

    private static Set<FaultMode> parseModes(String value) {
        Set<FaultMode> modes = EnumSet.noneOf(FaultMode.class);
        for (String word : value.split(",")) {
            String w = word.trim().toLowerCase(Locale.ROOT);
            if (w.equals("error")) {
                modes.add(FaultMode.ERROR_READS);
                modes.add(FaultMode.ERROR_WRITES);
                continue;
            }
            FaultMode m = null;
            for (FaultMode f : FaultMode.values()) {
                if (f.label().equals(w)) {
                    m = f;
                }
            }
            if (m == null) {
                throw new InvalidArgumentException("flakey: mode '" + word.trim() + "' is unknown; use error, error_reads, error_writes, "
                        + "drop_writes, corrupt_reads or corrupt_writes (comma-separated)");
            }
            modes.add(m);
        }
        int readModes = 0;
        int writeModes = 0;
        for (FaultMode m : modes) {
            if (m.reads) {
                readModes++;
            } else {
                writeModes++;
            }
        }
        if (readModes > 1 || writeModes > 1) {
            throw new InvalidArgumentException("flakey: mode=" + value + " combines conflicting modes; use at most one read mode "
                    + "(error_reads, corrupt_reads) and one write mode (error_writes, drop_writes, corrupt_writes)");
        }
        return modes;
    }

    static Set<String> labels(Set<FaultMode> modes) {
        Set<String> s = new java.util.LinkedHashSet<>();
        modes.forEach(m -> s.add(m.label()));
        return s;
    }

    String modeLabel() {
        StringJoiner j = new StringJoiner(",");
        labels(modes).forEach(j::add);
        return j.toString();
    }
}
