package dev.strata.cache.writecache.internal.io;

import java.util.Arrays;

/**
 * The pieces of one read — {@code length} bytes at {@code offset} from the cache device at
 * {@code slotOffset} (slots {@code [firstSlot, lastSlot]}), or from the backing device
 * ({@code slotOffset} -1) — in primitive arrays a thread keeps between its reads, so a read
 * allocates nothing per request (the developers' guide). Used by one thread at a time.
 */
final class ReadPieces {
    int count;
    long[] offset = new long[4];
    int[] length = new int[4];
    long[] slotOffset = new long[4];
    int[] firstSlot = new int[4];
    int[] lastSlot = new int[4];

    /** Adds {@code n} bytes at {@code at} from slot {@code slot} at {@code slotAt} (-1, -1: backing), merging with the last piece when adjacent. */
    void add(long at, int n, int slot, long slotAt) {
        if (count > 0) {
            int k = count - 1;
            boolean follows = slotAt < 0 ? slotOffset[k] < 0
                    : slotOffset[k] >= 0 && slotAt == slotOffset[k] + length[k];
            if (follows) {
                length[k] += n;
                if (slot >= 0) {
                    lastSlot[k] = slot;
                }
                return;
            }
        }
        if (count == offset.length) {
            int m = count * 2;
            offset = Arrays.copyOf(offset, m);
            length = Arrays.copyOf(length, m);
            slotOffset = Arrays.copyOf(slotOffset, m);
            firstSlot = Arrays.copyOf(firstSlot, m);
            lastSlot = Arrays.copyOf(lastSlot, m);
        }
        offset[count] = at;
        length[count] = n;
        slotOffset[count] = slotAt;
        firstSlot[count] = slot;
        lastSlot[count++] = slot;
    }
}
