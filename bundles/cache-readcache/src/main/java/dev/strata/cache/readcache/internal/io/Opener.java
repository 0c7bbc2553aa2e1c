package dev.strata.cache.readcache.internal.io;

import dev.strata.cache.support.device.CacheWindow;
import dev.strata.cache.support.units.Iec;
import dev.strata.api.BlockDevice;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.ReadCachePolicy;
import dev.strata.cache.readcache.internal.format.FormatException;
import dev.strata.cache.readcache.internal.format.Layout;
import dev.strata.cache.readcache.internal.format.Superblock;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Opens (or formats) a readcache: checks every argument and the cache device's superblock before
 * anything is written, then formats if asked or blank, reads the metadata, and binds the policy.
 */
public final class Opener {
    /** What to open. {@code blockSize} 0: as formatted (4096 for a new cache). */
    public record Options(int blockSize, boolean format, String originId, String policy, Tunables tunables,
            PolicySource policies, Consumer<ReadCache> onRelease, LongSupplier nanos) {
    }

    private Opener() {
    }

    /** Options with defaults, for tests. */
    public static Options options(PolicySource policies) {
        return new Options(0, false, null, ReadCachePolicy.DEFAULT, Tunables.DEFAULTS, policies, c -> { }, System::nanoTime);
    }

    public static Options withPolicy(Options o, String policy) {
        return new Options(o.blockSize(), o.format(), o.originId(), policy, o.tunables(), o.policies(), o.onRelease(), o.nanos());
    }

    public static Options withFormat(Options o, boolean format) {
        return new Options(o.blockSize(), format, o.originId(), o.policy(), o.tunables(), o.policies(), o.onRelease(), o.nanos());
    }

    public static Options withBlockSize(Options o, int bs) {
        return new Options(bs, o.format(), o.originId(), o.policy(), o.tunables(), o.policies(), o.onRelease(), o.nanos());
    }

    public static Options withOriginId(Options o, String id) {
        return new Options(o.blockSize(), o.format(), id, o.policy(), o.tunables(), o.policies(), o.onRelease(), o.nanos());
    }

    public static Options withTunables(Options o, long cutoff, Map<String, String> policyTunables) {
        return new Options(o.blockSize(), o.format(), o.originId(), o.policy(), Tunables.of(cutoff, policyTunables),
                o.policies(), o.onRelease(), o.nanos());
    }

    public static Options withTunables(Options o, Tunables t) {
        return new Options(o.blockSize(), o.format(), o.originId(), o.policy(), t, o.policies(), o.onRelease(), o.nanos());
    }

    /** {@code o} with {@code write_promote} set to {@code on}. */
    public static Options withWritePromote(Options o, boolean on) {
        return withTunables(o, o.tunables().withWritePromote(on));
    }

    /** {@code o} with {@code readahead} set to {@code v} (a size; checked). */
    public static Options withReadahead(Options o, String v) {
        return withTunables(o, o.tunables().withReadahead(v));
    }

    public static Options withOnRelease(Options o, Consumer<ReadCache> r) {
        return new Options(o.blockSize(), o.format(), o.originId(), o.policy(), o.tunables(), o.policies(), r, o.nanos());
    }

    public static ReadCache open(String name, BlockDevice origin, BlockDevice cache, Options o) throws IOException {
        if (origin == cache) {
            throw new InvalidArgumentException("readcache: origin and cache are the same device; use two devices");
        }
        if (cache.blockSize() > Layout.META_BLOCK) {
            throw new InvalidArgumentException("readcache: the cache device's block size " + cache.blockSize()
                    + " is above 4096; use a device with 512- or 4096-byte blocks");
        }
        ReadCachePolicy policy = checkArguments(o);
        if (o.blockSize() != 0 && o.blockSize() < origin.blockSize()) {
            throw new InvalidArgumentException("readcache: block_size=" + o.blockSize()
                    + " is smaller than the origin's block size " + origin.blockSize() + "; use at least that");
        }
        if (cache.size() < Layout.META_BLOCK) {
            throw new InvalidArgumentException("readcache: " + CacheWindow.has(cache)
                    + "; at least " + Iec.atLeast(Layout.META_BLOCK) + " are needed; " + CacheWindow.larger(cache));
        }
        ByteBuffer sbBuf = ByteBuffer.allocate(Layout.META_BLOCK);
        cache.read(0, sbBuf);
        Superblock sb = null;
        boolean blank = false;
        try {
            sb = Superblock.decode(sbBuf.flip());
        } catch (FormatException e) {
            if (e.kind() == FormatException.Kind.BLANK) {
                blank = true;
            } else if (!o.format()) {
                throw new InvalidArgumentException("readcache: " + e.getMessage()
                        + "; use format=true to reformat it as a readcache (its contents are lost)");
            }
        }
        boolean fresh = o.format() || blank;
        if (fresh && policy == null) {
            throw noPolicy(o);
        }
        if (!fresh) {
            check(sb, origin, cache, o);
        } else {
            int bs = o.blockSize() == 0 ? 4096 : o.blockSize();
            Layout l = Layout.fit(cache.size(), bs);
            if (l == null) {
                throw new InvalidArgumentException("readcache: " + CacheWindow.has(cache) + ", fewer than "
                        + Layout.MIN_SLOTS + " blocks of " + Iec.atLeast(bs) + "; " + CacheWindow.larger(cache)
                        + " or a smaller block_size");
            }
            sb = Superblock.create(l, UUID.randomUUID(), origin.size(), o.originId() == null ? "" : o.originId(),
                    System.currentTimeMillis());
        }
        // the origin's present contents become durable, so the first promotions can be recorded
        origin.flush();
        if (fresh) {
            Recovery.format(cache, sb);
        }
        Layout l = sb.layout();
        CacheState state = new CacheState((int) l.slots());
        long originBlocks = (origin.size() + l.blockSize() - 1) / l.blockSize();
        Recovery.Found found = Recovery.load(cache, sb, originBlocks, state);
        MetadataWriter meta = new MetadataWriter(cache, l, state, sb.uuidHash(), found.maxSeq());
        PolicyBinding binding = new PolicyBinding(o.policies(), o.policy(), o.onRelease());
        ReadCache rc = new ReadCache(name, origin, cache, l, state, meta, new Meters(o.nanos()::getAsLong), o.tunables(), binding, found);
        if (policy != null) {
            binding.arrived(rc, o.policy(), policy, o.tunables().policy());
        }
        return rc;
    }

    /**
     * What {@link #open} refuses in {@code o} before it looks at a device: a {@code block_size} that is
     * not a power of two from 4096 to 1M, a policy not installed for a format, a tunable the
     * (installed) policy does not take. Returns the policy, or null if it is not installed (a reopened
     * cache binds it when it comes).
     */
    public static ReadCachePolicy checkArguments(Options o) {
        if (o.blockSize() != 0 && (Integer.bitCount(o.blockSize()) != 1 || o.blockSize() < Layout.MIN_BLOCK
                || o.blockSize() > Layout.MAX_BLOCK)) {
            throw new InvalidArgumentException("readcache: block_size=" + o.blockSize()
                    + " must be a power of two from 4096 to 1M");
        }
        ReadCachePolicy policy = o.policies().find(o.policy());
        if (o.format() && policy == null) {
            throw noPolicy(o); // a format needs the policy now (a reopen binds it when it comes)
        }
        checkPolicyTunables(policy, o);
        return policy;
    }

    private static InvalidArgumentException noPolicy(Options o) {
        return new InvalidArgumentException("readcache: no policy '" + o.policy() + "' is installed; installed: "
                + o.policies().installed());
    }

    private static void checkPolicyTunables(ReadCachePolicy policy, Options o) {
        if (policy == null || o.tunables().policy().isEmpty()) {
            return;
        }
        ReadCachePolicy.Instance probe = policy.open(ReadCachePolicy.Contents.of(new long[] {ReadCachePolicy.Contents.EMPTY}),
                o.tunables().policy());
        try {
            for (Map.Entry<String, String> e : o.tunables().policy().entrySet()) {
                if (!probe.set(e.getKey(), e.getValue())) {
                    throw new InvalidArgumentException("readcache: unknown argument '" + e.getKey() + "' (not a tunable of policy '"
                            + o.policy() + "': " + policy.usage() + ")");
                }
            }
        } finally {
            probe.close();
        }
    }

    private static void check(Superblock sb, BlockDevice origin, BlockDevice cache, Options o) {
        if (o.blockSize() != 0 && o.blockSize() != sb.blockSize()) {
            throw new InvalidArgumentException("readcache: the cache device is formatted with block_size=" + sb.blockSize()
                    + ", not " + o.blockSize() + "; omit block_size, or use format=true to reformat it (its contents are lost)");
        }
        if (sb.originSize() != origin.size()
                || (!sb.originId().isEmpty() && o.originId() != null && !sb.originId().equals(o.originId()))) {
            // advice first; the factory knows identities, not the names behind them
            throw new InvalidArgumentException("readcache: pass format=true to use this cache device over this origin (it holds"
                    + " only clean copies: nothing is lost), or name its own origin: it belongs to another one (size "
                    + Iec.exact(sb.originSize()) + (sb.originId().isEmpty() ? "" : ", id " + sb.originId()) + "; this one: "
                    + Iec.exact(origin.size()) + (o.originId() == null ? "" : ", id " + o.originId()) + ")");
        }
        if (sb.layout().usedBytes() > cache.size()) {
            throw new InvalidArgumentException("readcache: the cache device is smaller than its superblock says ("
                    + Iec.exact(cache.size()) + " < " + Iec.exact(sb.layout().usedBytes()) + "); use format=true to reformat it");
        }
    }
}
