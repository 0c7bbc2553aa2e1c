package dev.strata.tools.internal;

import dev.strata.tools.internal.format.*;

import dev.strata.cache.readcache.internal.format.Superblock;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

class ReadcacheToolTest extends FormatToolContract {
    @Override
    CacheFormat format() {
        return new ReadcacheFormat();
    }

    /** The superblock's fields (its zero tail sampled) and every slot entry. */
    @Override
    List<Long> metadataBytes(Images.Pair p) throws Exception {
        Superblock sb = Superblock.decode(ByteBuffer.wrap(p.cache(), 0, 4096).slice());
        List<Long> out = new ArrayList<>();
        for (long i = 0; i < 4096; i += i < 192 ? 1 : 61) {
            out.add(i);
        }
        for (long s = 0; s < sb.slots(); s++) {
            long at = sb.layout().metaOffset(s / 256) + 16 * (s % 256);
            for (int k = 0; k < 16; k++) {
                out.add(at + k);
            }
        }
        return out;
    }
}
