package dev.strata.cache.readcache.internal.io;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceTimeoutException;
import dev.strata.cache.readcache.internal.format.Layout;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.function.Consumer;

/**
 * {@code write_promote}: after a write has completed on the origin (and before it is
 * acknowledged or counted ended), keeps the blocks it wrote whole cached as clean copies of the
 * written data, when the policy admits them ({@link CacheState#planWrite}). The copy is written
 * to its slot without FUA and installed VOLATILE and UNSYNCED: served at once, but its entry is
 * written valid only by a flush that made the origin's copy durable and then flushed the cache
 * device ({@link ReadCache#flush}): a mapping never becomes durable before the origin holds its
 * data durably. Rule 4 of the ordering holds as in {@link Promoter}: a victim slot whose entry may
 * be valid is rewritten invalid (FUA) before the new data goes into it. A copy that another write
 * of the block overlapped is never installed ({@link Stamps#writeCurrent}).
 * <p>
 * A cache-device error here does not fail the client's write (the origin has it): the copies are
 * abandoned and promotion is disabled, as for a read's promotion.
 */
final class WritePromoter {
    private final BlockDevice cache;
    private final Layout layout;
    private final CacheState state;
    private final MetadataWriter meta;
    private final Meters meters;
    private final PromotionCommit dataCommit;
    private final Consumer<Exception> onWriteError;

    WritePromoter(BlockDevice cache, Layout layout, CacheState state, MetadataWriter meta, Meters meters,
            PromotionCommit dataCommit, Consumer<Exception> onWriteError) {
        this.cache = cache;
        this.layout = layout;
        this.state = state;
        this.meta = meta;
        this.meters = meters;
        this.dataCommit = dataCommit;
        this.onWriteError = onWriteError;
    }

    /**
     * The write of {@code data} (its remaining bytes) at {@code offset}, which began with stamp
     * snapshot {@code snap}, has completed on the origin: installs copies of its whole blocks.
     */
    void promote(long offset, ByteBuffer data, long snap) {
        int bs = layout.blockSize();
        int len = data.remaining();
        long first = (offset + bs - 1) / bs;
        long end = (offset + len) / bs;
        if (end <= first) {
            return;
        }
        int n = (int) (end - first);
        CacheState.Plan plan = state.planWrite(first, n, snap);
        meters.writeRejections.add(plan.rejections);
        meters.evictions.add(plan.evictions);
        if (plan.promotions == 0) {
            return;
        }
        int base = data.position();
        boolean[] written = new boolean[n];
        int i = 0;
        try {
            for (; i < n; i++) {
                if (plan.codes[i] >= CacheState.Plan.MISS) {
                    continue;
                }
                int slot = CacheState.Plan.promoteSlot(plan.codes[i]);
                long b = first + i;
                if (state.diskValid(slot)) {
                    meta.write(Layout.metaBlockOf(slot));
                    meters.metadataWrites.increment();
                }
                if (!state.mayWriteWritten(slot, b, snap)) {
                    state.abandon(slot, b);
                    meters.promotionsAbandoned.increment();
                    continue;
                }
                cache.write(layout.slotOffset(slot), data.slice(base + (int) (b * bs - offset), bs), 0);
                written[i] = true;
            }
        } catch (IOException | RuntimeException e) {
            // i: the block that failed (abandon it too); the rest were not written
            for (int j = 0; j < n; j++) {
                if (plan.codes[j] < CacheState.Plan.MISS && (written[j] || j >= i)) {
                    state.abandon(CacheState.Plan.promoteSlot(plan.codes[j]), first + j);
                    meters.promotionsAbandoned.increment();
                }
            }
            if (!(e instanceof DeviceTimeoutException)) {
                onWriteError.accept(e);
            }
            return;
        }
        dataCommit.wrote(); // the flush that records these copies syncs them first
        for (int j = 0; j < n; j++) {
            if (!written[j]) {
                continue;
            }
            if (state.installWritten(CacheState.Plan.promoteSlot(plan.codes[j]), first + j, snap)) {
                meters.writePromotions.increment();
            } else {
                meters.promotionsAbandoned.increment();
            }
        }
    }
}
