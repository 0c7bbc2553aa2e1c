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

    /** The superblock (its zero tail included) and every metadata sector. */
    @Override
    List<long[]> structures(Images.Pair p) throws Exception {
        Superblock sb = Superblock.decode(ByteBuffer.wrap(p.cache(), 0, 4096).slice());
        List<long[]> out = new ArrayList<>();
        out.add(new long[] {0, 4096});
        for (long i = 0; i < sb.layout().metadataSectors(); i++) {
            out.add(new long[] {4096 + 512 * i, 512});
        }
        return out;
    }
}
