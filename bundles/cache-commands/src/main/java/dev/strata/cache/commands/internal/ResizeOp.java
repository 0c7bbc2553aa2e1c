package dev.strata.cache.commands.internal;

import java.io.IOException;
import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import dev.strata.api.CacheTarget;
import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceManager;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.TargetArguments;
import dev.strata.cache.commands.internal.CacheOps.Cancelled;

/**
 * {@code cache:resize DEV [size=SIZE]}: the cache laid out again over {@code SIZE} bytes of its own
 * cache device (by default all of it: after the device grew), live, as a switch to the same policy
 * with the same arguments and {@code cache_size=SIZE} on the same cache device.
 *
 * <h2>Why a switch</h2>
 * No policy's format can move its slots: the metadata area grows with the slot count and the data
 * slots start after it, so a new size is a new layout. The switch gives every step of that its
 * safety: the dirty blocks are written back first while I/O runs (progress, Ctrl-C), the new
 * definition with {@code cache_size} and a first-build {@code format=true} is the commit (a crash
 * before it finds the old cache, after it the new one, formatted at start if need be), and the
 * format runs while the backing device serves I/O, so the pause is drain + swap. The cache keeps
 * none of its copies: a write cache's are written back, a read cache's dropped (it fills again).
 * <p>
 * Which policies can: those whose factory takes {@code cache_size=} (the argument the shared
 * {@code CacheWindow} reads). A policy whose factory refuses it (a log-structured cache) gets one
 * line saying what to do instead; the command knows no policy's name.
 */
final class ResizeOp {
    static final String SIZE = "size";
    static final String CACHE_SIZE = "cache_size";
    /** Below this no policy's layout is worth having (and above it every resizable one fits). */
    static final long MIN_BYTES = 1L << 20;

    private final DeviceManager manager;
    private final CacheOps ops;

    ResizeOp(DeviceManager manager, CacheOps ops) {
        this.manager = manager;
        this.ops = ops;
    }

    String run(String device, Map<String, String> given, PrintStream out, Detaches.Run run)
            throws IOException, Cancelled {
        TargetArguments.of("cache:resize", given, Set.of(SIZE)); // any other key: one line naming it
        SwitchOp sw = new SwitchOp(manager, ops, "resize");
        SwitchOp.Old old = sw.old(device);
        DeviceInfo cache = manager.info(old.cache())
                .orElseThrow(() -> new InvalidArgumentException("no device named '" + old.cache() + "'; see dev:list"));
        long bytes = given.containsKey(SIZE) ? TargetArguments.parseSize(SIZE, given.get(SIZE)) : cache.size();
        if (bytes < MIN_BYTES) {
            // checked here: the policy would find it too small only when it formats, after the commit
            throw new InvalidArgumentException(Render.resizeTooSmall(device, given.get(SIZE), MIN_BYTES));
        }
        if (bytes > cache.size()) {
            throw new InvalidArgumentException(Render.resizeTooLarge(device, given.get(SIZE), old.cache(), cache.size()));
        }
        DeviceInfo info = manager.info(device).orElseThrow();
        Map<String, String> args = new LinkedHashMap<>(info.arguments());
        String backingKey = ops.call(device, CacheTarget::authoritativeDeviceArgument);
        args.remove(backingKey);
        args.remove(SwitchOp.FORMAT_KEY);
        Long laidOut = laidOut(args.get(CACHE_SIZE), cache.blockSize());
        if (laidOut != null && laidOut == bytes / cache.blockSize() * cache.blockSize()) {
            // the layout covers these bytes already: a new one would be the same, and a writecache
            // would have written every dirty block back for it
            throw new InvalidArgumentException(given.containsKey(SIZE) ? Render.sameSize(device, bytes, old.cache())
                    : Render.capacityUnchanged(device, laidOut));
        }
        args.put(CACHE_SIZE, Long.toString(bytes));
        refuseUnlessResizable(device, old, args);
        long before = ops.call(device, CacheTarget::capacityBlocks);
        int blockSize = ops.call(device, CacheTarget::cacheBlockSize);
        args.put(SwitchOp.FORMAT_KEY, "true"); // the first build only: the new layout
        SwitchOp.Result r = sw.swap(device, old.type(), args, out, run);
        long after = ops.call(device, CacheTarget::capacityBlocks);
        return Render.resized(device, old.type(), old.cache(), before, after, ops.call(device, CacheTarget::cacheBlockSize),
                blockSize, r.writtenBack(), r.pauseMicros());
    }

    /**
     * The bytes of its cache device the cache is laid out over, from the stored {@code cache_size}
     * (as the shared window rounds it: down to the device's block size); null when none is stored
     * (then the layout covers the whole device as it was when formatted, which the command cannot see).
     */
    private static Long laidOut(String cacheSize, int blockSize) {
        if (cacheSize == null) {
            return null;
        }
        try {
            long b = TargetArguments.parseSize(CACHE_SIZE, cacheSize);
            return b / blockSize * blockSize;
        } catch (InvalidArgumentException e) {
            return null; // not a size: the factory says so when the switch checks it
        }
    }

    /**
     * A policy that does not take {@code cache_size=} refuses the switch for that argument alone:
     * then the answer is what to do instead, not the factory's "unknown argument".
     */
    private void refuseUnlessResizable(String device, SwitchOp.Old old, Map<String, String> args) throws IOException {
        Map<String, String> first = Map.of(SwitchOp.FORMAT_KEY, "true");
        try {
            manager.checkSwitch(device, old.type(), args, old.backing(), first);
        } catch (InvalidArgumentException e) {
            Map<String, String> without = new LinkedHashMap<>(args);
            without.remove(CACHE_SIZE);
            try {
                manager.checkSwitch(device, old.type(), without, old.backing(), first);
            } catch (InvalidArgumentException other) {
                throw e; // wrong for another reason: that reason, as the switch would say it
            }
            throw new InvalidArgumentException(Render.notResizable(device, old.type()));
        }
    }
}
