package dev.strata.cache.readcache.internal.io;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceTimeoutException;
import dev.strata.cache.readcache.internal.format.Layout;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.function.Consumer;

/**
 * Promotes the blocks one read planned to promote, as one batch: rule 4 of the ordering (a slot
 * whose entry may be valid is rewritten invalid first), the data of every block written without
 * FUA, one shared flush for them all ({@link PromotionCommit}: rule 2, data before entry), the
 * installs (the staleness check: {@link Stamps}), then each metadata block the batch touched
 * written once (shared with concurrent batches by {@link MetadataWriter#writeCovering}). One block
 * at a time, a 1 MiB read cost 256 flushes and 256 metadata writes; now one and a few.
 * Every planned slot ends installed or abandoned, exactly once.
 */
final class Promoter {
    private final BlockDevice cache;
    private final Layout layout;
    private final CacheState state;
    private final MetadataWriter meta;
    private final Meters meters;
    private final PromotionCommit dataCommit;
    private final Consumer<Exception> onWriteError;

    Promoter(BlockDevice cache, Layout layout, CacheState state, MetadataWriter meta, Meters meters,
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
     * Promotes {@code blocks[i]} into {@code slots[i]} with {@code data[i]} (the block as read from
     * the origin), {@code count} of them, planned at stamp {@code snap}.
     */
    void promote(long[] blocks, int[] slots, ByteBuffer[] data, int count, long snap) {
        boolean[] written = new boolean[count];
        int i = 0;
        try {
            for (; i < count; i++) {
                int slot = slots[i];
                if (state.diskValid(slot)) {
                    meta.write(Layout.metaBlockOf(slot));
                    meters.metadataWrites.increment();
                }
                if (!state.mayWriteData(slot, blocks[i], snap)) {
                    state.abandon(slot, blocks[i]);
                    meters.promotionsAbandoned.increment();
                    continue;
                }
                cache.write(layout.slotOffset(slot), data[i], 0);
                written[i] = true;
            }
            dataCommit.durable();
        } catch (IOException | RuntimeException e) {
            // i: the block that failed (abandon it too), or count if the flush failed
            for (int j = 0; j < count; j++) {
                if (written[j] || j >= i) {
                    state.abandon(slots[j], blocks[j]);
                    meters.promotionsAbandoned.increment();
                }
            }
            if (!(e instanceof DeviceTimeoutException)) {
                onWriteError.accept(e); // a slow cache device is not a broken one: promotion stays on after a timeout
            }
            return;
        }
        int[] touched = new int[count];
        int t = 0;
        for (int j = 0; j < count; j++) {
            if (!written[j]) {
                continue;
            }
            CacheState.Installed r = state.install(slots[j], blocks[j], snap);
            if (r == CacheState.Installed.ABANDONED) {
                meters.promotionsAbandoned.increment();
                continue;
            }
            meters.promotions.increment();
            if (r == CacheState.Installed.CACHED) {
                touched[t++] = Layout.metaBlockOf(slots[j]);
            }
        }
        if (t == 0) {
            return;
        }
        int[] m = Arrays.stream(touched, 0, t).sorted().distinct().toArray();
        try {
            meters.metadataWrites.add(meta.writeAllCovering(m, meta.changed()));
        } catch (IOException | RuntimeException e) {
            onWriteError.accept(e);
        }
    }
}
