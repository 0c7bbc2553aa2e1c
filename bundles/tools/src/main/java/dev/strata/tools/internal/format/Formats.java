package dev.strata.tools.internal.format;

import dev.strata.api.BlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** The formats the tool reads, and which one a device holds. */
public final class Formats {
    public static final List<CacheFormat> ALL = List.of(new WriteboostFormat(), new WritecacheFormat(),
            new ReadcacheFormat(), new MirrorLogFormat());

    private Formats() {
    }

    /** The format named {@code name}, or null. */
    public static CacheFormat named(String name) {
        return ALL.stream().filter(f -> f.name().equals(name)).findFirst().orElse(null);
    }

    /**
     * Which format the device holds: the superblock's policy name (bytes 16–31 in every Strata
     * superblock); if that is damaged, the format whose scan can read (or mend) the superblock.
     * Null if none.
     */
    public static CacheFormat detect(BlockDevice cache) throws IOException {
        return detect(cache, Hints.NONE);
    }

    /** As {@link #detect(BlockDevice)}, a damaged superblock rebuilt with {@code hints} if need be. */
    public static CacheFormat detect(BlockDevice cache, Hints hints) throws IOException {
        if (cache.size() < 4096) {
            return null;
        }
        ByteBuffer b = ByteBuffer.allocate(4096);
        cache.read(0, b);
        if (java.util.Arrays.equals(java.util.Arrays.copyOf(b.array(), 8), dev.strata.mirror.internal.format.LogHeader.MAGIC)) {
            return named("mirror-log");
        }
        int n = 0;
        while (n < 16 && b.get(16 + n) != 0) {
            n++;
        }
        CacheFormat named = named(new String(b.array(), 16, n, StandardCharsets.US_ASCII));
        if (named != null) {
            return named;
        }
        for (CacheFormat f : ALL) {
            if (f instanceof ReadcacheFormat) {
                continue; // nothing but its superblock identifies a readcache (its entries' CRCs fold in the UUID): name it with --type
            }
            Findings found = f.scan(cache, hints);
            if (found.unrepairable() == null || found.needsInput()) {
                return f;
            }
        }
        return null;
    }
}
