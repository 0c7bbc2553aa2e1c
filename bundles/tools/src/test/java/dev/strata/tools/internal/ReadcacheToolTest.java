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

    /** The superblock (its zero tail included) and every slot entry. */
    @Override
    List<long[]> structures(Images.Pair p) throws Exception {
        Superblock sb = Superblock.decode(ByteBuffer.wrap(p.cache(), 0, 4096).slice());
        List<long[]> out = new ArrayList<>();
        out.add(new long[] {0, 4096});
        for (long s = 0; s < sb.slots(); s++) {
            out.add(new long[] {sb.layout().metaOffset(s / 256) + 16 * (s % 256), 16});
        }
        return out;
    }
}
