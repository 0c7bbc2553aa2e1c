package dev.strata.tools.internal;

import dev.strata.tools.internal.format.*;

import dev.strata.api.BlockDevice;
import dev.strata.api.CacheTarget;
import dev.strata.api.Target;
import dev.strata.testsupport.crash.CrashMode;
import dev.strata.testsupport.crash.CrashableDevice;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Random;

/** Cache images made by the real targets (built by their factories), and what they read as. */
final class Images {
    static final long BACKING = 4L << 20;
    static final long CACHE = 17L << 20; // writeboost's smallest

    private Images() {
    }

    /**
     * A cache and its backing device, as images (durable contents), and the model: every value
     * each 4 KiB block was written with, in order (a block never written held zeroes).
     */
    record Pair(byte[] cache, byte[] backing, Map<Long, List<byte[]>> history) {
        Pair(byte[] cache, byte[] backing) {
            this(cache, backing, Map.of());
        }

        CrashableDevice cacheDevice() {
            return CrashableDevice.ofImage("cache", cache, 512);
        }

        CrashableDevice backingDevice() {
            return CrashableDevice.ofImage("backing", backing, 512);
        }
    }

    static Target open(CacheFormat f, BlockDevice cache, BlockDevice backing, String extra) throws IOException {
        Map<String, String> args = new java.util.HashMap<>(Map.of(Targets.backingArgument(f), "backing", "cache", "cache"));
        if (!extra.isEmpty()) {
            for (String kv : extra.split(" ")) {
                String[] p = kv.split("=", 2);
                args.put(p[0], p[1]);
            }
        }
        dev.strata.api.TargetFactory factory = f instanceof ReadcacheFormat
                ? dev.strata.cache.readcache.internal.PolicyFactories.with(dev.strata.api.ReadCachePolicy.DEFAULT,
                        new dev.strata.readcache.policies.internal.WTinyLfuPolicy())
                : Targets.factory(f);
        return factory.create(new Context("t0", args, Map.of("backing", backing, "cache", cache)));
    }

    /**
     * Writes {@code writes} random 4 KiB blocks (seeded) through a new cache of format {@code f}, a
     * flush after every tenth; then either closes it cleanly or cuts the power in {@code mode}.
     */
    static Pair make(CacheFormat f, long seed, int writes, boolean close, CrashMode mode) throws IOException {
        CrashableDevice cache = new CrashableDevice("cache", f instanceof WriteboostFormat ? CACHE : 2L << 20, 512);
        CrashableDevice backing = new CrashableDevice("backing", BACKING, 512);
        Random r = new Random(seed);
        Target t = open(f, cache, backing, "format=true");
        byte[] buf = new byte[4096];
        Map<Long, List<byte[]>> history = new java.util.HashMap<>();
        for (int i = 0; i < writes; i++) {
            long block = r.nextInt((int) (BACKING / 4096));
            r.nextBytes(buf);
            history.computeIfAbsent(block, k -> new java.util.ArrayList<>()).add(buf.clone());
            t.write(block * 4096, ByteBuffer.wrap(buf), 0);
            if (i % 10 == 9) {
                t.flush();
            }
            if (!f.holdsDirtyData() && i % 3 == 0) {
                t.read(r.nextInt((int) (BACKING / 4096)) * 4096L, ByteBuffer.allocate(4096)); // promotions
            }
        }
        if (close) {
            t.flush();
            t.close();
            return new Pair(cache.durableImage(), backing.durableImage(), history);
        }
        Pair p = new Pair(cache.crashImage(mode, r), backing.crashImage(mode, r), history);
        t.close(); // after the images were taken: what it writes now does not count
        return p;
    }

    /** Everything the cache over these images reads as (the target opened, read, closed). */
    static byte[] contents(CacheFormat f, Pair p) throws IOException {
        return contents(f, new ImageDevice(p.cache().clone()), new ImageDevice(p.backing().clone()));
    }

    /** Everything the cache over these devices reads as. */
    static byte[] contents(CacheFormat f, BlockDevice cache, BlockDevice backing) throws IOException {
        Target t = open(f, cache, backing, "");
        try {
            ByteBuffer all = ByteBuffer.allocate((int) t.size());
            t.read(0, all);
            return all.array();
        } finally {
            t.close();
        }
    }

    /** Runs a tool command, returning its exit status and output. */
    record Run(int status, String out) {
    }

    interface Command {
        int run(PrintStream out) throws Exception;
    }

    static Run run(Command c) throws Exception {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        PrintStream ps = new PrintStream(b, true, StandardCharsets.UTF_8);
        int s = c.run(ps);
        return new Run(s, b.toString(StandardCharsets.UTF_8));
    }
}
