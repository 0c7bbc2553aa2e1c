package dev.strata.mirror.internal.crash;

import dev.strata.api.BlockDevice;
import dev.strata.mirror.internal.format.LogHeader;
import dev.strata.mirror.internal.format.LogLayout;
import dev.strata.mirror.internal.io.MirrorTarget;
import dev.strata.mirror.internal.log.DiskLog;
import dev.strata.testsupport.crash.CrashTestSubject;
import dev.strata.testsupport.crash.CrashableDevice;
import dev.strata.testsupport.crash.Workload;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A two-leg mirror with a {@code disk:} log over crashable devices, every other open with
 * {@code write_fanout=caller} (legs of 1 MiB, 8 KiB regions,
 * so the workload's 256 KiB span 32 regions). Background work is a batch of resync and a
 * clear-only commit on a clock that jumps past {@code clear_delay}, so crashes also land in the
 * middle of a resync and of a clear.
 *
 * <p>The offline check is the disk rule: every region the log holds clean reads the same on
 * every in-sync leg; and after a full resync (on copies of the images) the legs agree entirely.
 */
final class MirrorSubject implements CrashTestSubject {
    static final long REGION = 8192;
    static final long LEG = 1 << 20;
    private final AtomicLong clock = new AtomicLong();
    private final AtomicLong opens = new AtomicLong();

    @Override
    public String name() {
        return "mirror-disk-log";
    }

    @Override
    public List<DeviceSpec> devices() {
        return List.of(new DeviceSpec("a", LEG, 4096), new DeviceSpec("b", LEG, 4096), new DeviceSpec("log", 16384, 4096));
    }

    @Override
    public BlockDevice create(List<BlockDevice> d) throws IOException {
        return open(d);
    }

    @Override
    public BlockDevice reopen(List<BlockDevice> d) throws IOException {
        return open(d);
    }

    /** Every other open writes its legs one after the other on the caller ({@code write_fanout=caller}). */
    private MirrorTarget open(List<BlockDevice> d) throws IOException {
        MirrorTarget m = MirrorTarget.open("m", List.of("a", "b"), List.of(d.get(0), d.get(1)), new DiskLog("log", d.get(2)), REGION,
                MirrorTarget.Options.defaults().withManual(true).withNosync(true).withClock(clock::get));
        if ((opens.getAndIncrement() & 1) == 1) {
            m.message("write_fanout", "caller");
        }
        return m;
    }

    @Override
    public void background(BlockDevice target) throws IOException {
        MirrorTarget m = (MirrorTarget) target;
        m.resyncRunOnce(4);
        clock.addAndGet(4_000_000_000L);
        m.clearerRunOnce();
    }

    @Override
    public void checkOffline(List<BlockDevice> d) throws IOException {
        byte[] a = image(d.get(0));
        byte[] b = image(d.get(1));
        byte[] log = image(d.get(2));
        if (LogHeader.isBlank(ByteBuffer.wrap(log, 0, LogLayout.HEADER_SIZE).slice())
                && LogHeader.isBlank(ByteBuffer.wrap(log, LogLayout.HEADER_SIZE, LogLayout.HEADER_SIZE).slice())) {
            if (!Arrays.equals(a, b)) {
                throw new AssertionError("no log was formatted, yet the legs differ");
            }
            return;
        }
        int regions = (int) (LEG / REGION);
        for (int r = 0; r < regions; r++) {
            boolean dirty = (log[(int) LogLayout.BITMAP_OFFSET + r / 8] & (1 << (r % 8))) != 0;
            int from = (int) (r * REGION);
            int to = (int) (from + REGION);
            if (!dirty && !Arrays.equals(a, from, to, b, from, to)) {
                throw new AssertionError("region " + r + " is clean in the log but the legs differ there");
            }
        }
        // restart and resync on copies: then the legs agree everywhere
        List<BlockDevice> copies = new ArrayList<>();
        copies.add(CrashableDevice.ofImage("a", a, 4096));
        copies.add(CrashableDevice.ofImage("b", b, 4096));
        copies.add(CrashableDevice.ofImage("log", log, 4096));
        MirrorTarget m = open(copies);
        m.resyncAll();
        if (m.dirtyRegions().cardinality() != 0 && !"0".equals(m.status().get("resync_pending"))) {
            throw new AssertionError("resync left work: " + m.status());
        }
        m.close();
        if (!Arrays.equals(image(copies.get(0)), image(copies.get(1)))) {
            throw new AssertionError("after resync the legs still differ");
        }
    }

    private static byte[] image(BlockDevice d) throws IOException {
        byte[] b = new byte[Math.toIntExact(d.size())];
        d.read(0, ByteBuffer.wrap(b));
        return b;
    }

    @Override
    public Workload workload() {
        return Workload.DEFAULT;
    }
}
