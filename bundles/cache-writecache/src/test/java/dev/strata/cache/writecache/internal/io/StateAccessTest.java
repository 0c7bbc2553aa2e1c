package dev.strata.cache.writecache.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.util.Arrays;
import java.util.Comparator;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The stable sort recovery links the index with: ties keep slot order (the lowest slot wins equal seq_counts). */
class StateAccessTest {
    @Test
    void sortIsStableAndAgreesWithTheLibrary() {
        Random r = new Random(5);
        for (int n : new int[] {0, 1, 2, 3, 7, 64, 1000, 4097}) {
            long[] keys = new long[n];
            int[] vals = IntStream.range(0, n).toArray();
            for (int i = 0; i < n; i++) {
                keys[i] = r.nextInt(Math.max(1, n / 3)); // many equal keys
            }
            Integer[] expected = IntStream.range(0, n).boxed().toArray(Integer[]::new);
            long[] k = keys.clone();
            Arrays.sort(expected, Comparator.comparingLong(i -> k[i])); // stable (a merge sort for objects)
            StateAccess.sortStable(keys, vals, n);
            assertArrayEquals(Arrays.stream(expected).mapToInt(Integer::intValue).toArray(), vals, "n=" + n);
            long[] sortedKeys = k.clone();
            Arrays.sort(sortedKeys);
            assertArrayEquals(sortedKeys, keys);
        }
    }
}
