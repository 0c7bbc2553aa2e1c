package dev.strata.cache.writeboost.internal.format;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** A record's data CRC built from its blocks' CRCs equals the CRC32C of the data read whole. */
class BlockCrcTest {
    static final int BS = Layout.BLOCK;

    static int combined(ByteBuffer data, int blocks) {
        int crc = 0;
        for (int k = 0; k < blocks; k++) {
            int block = Crc.of(data, k * BS, BS);
            crc = k == 0 ? block : BlockCrc.append(crc, block);
        }
        return crc;
    }

    @Test
    void combinedBlockCrcsEqualTheCrcOfTheWholeData() {
        SplittableRandom rnd = new SplittableRandom(11);
        for (int blocks : new int[] {1, 2, 3, 17, Layout.MAX_DATA}) {
            ByteBuffer data = ByteBuffer.allocate(blocks * BS);
            for (int i = 0; i < data.capacity(); i++) {
                data.put(i, (byte) rnd.nextInt());
            }
            assertEquals(Crc.of(data, 0, blocks * BS), combined(data, blocks), blocks + " random blocks");
        }
    }

    @Test
    void fixtures() {
        // zeroes and one set bit at each end: CRC32C values of the whole data as java.util.zip computes them
        ByteBuffer zeroes = ByteBuffer.allocate(2 * BS);
        assertEquals(Crc.of(zeroes, 0, 2 * BS), BlockCrc.append(Crc.of(zeroes, 0, BS), Crc.of(zeroes, BS, BS)));
        ByteBuffer first = ByteBuffer.allocate(2 * BS).put(0, (byte) 1);
        assertEquals(Crc.of(first, 0, 2 * BS), combined(first, 2));
        ByteBuffer last = ByteBuffer.allocate(2 * BS).put(2 * BS - 1, (byte) 0x80);
        assertEquals(Crc.of(last, 0, 2 * BS), combined(last, 2));
        // a block's CRC alone is unchanged (no combine for the first block)
        assertEquals(0x98F94189, Crc.of(zeroes, 0, BS));
    }
}
