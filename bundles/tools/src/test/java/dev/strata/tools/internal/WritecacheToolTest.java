package dev.strata.tools.internal;

import dev.strata.tools.internal.format.*;

import dev.strata.cache.writecache.internal.format.Superblock;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

class WritecacheToolTest extends FormatToolContract {
    @Override
    CacheFormat format() {
        return new WritecacheFormat();
    }

    /** The superblock's first sector (the rest is zero, covered by its CRC: sampled) and every metadata sector. */
    @Override
    List<Long> metadataBytes(Images.Pair p) throws Exception {
        Superblock sb = Superblock.decode(ByteBuffer.wrap(p.cache(), 0, 4096).slice());
        List<Long> out = new ArrayList<>();
        for (long i = 0; i < 4096; i += i < 512 ? 1 : 61) {
            out.add(i);
        }
        long end = sb.layout().dataOffset();
        for (long i = 4096; i < 4096 + 512 * sb.layout().metadataSectors() && i < end; i++) {
            out.add(i);
        }
        return out;
    }
}
