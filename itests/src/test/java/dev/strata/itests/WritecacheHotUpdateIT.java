package dev.strata.itests;

import java.util.Map;

import javax.inject.Inject;

import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.BundleContext;

import dev.strata.api.DeviceManager;

/**
 * DESIGN.md §3, hot update of a policy bundle, for the writecache (issue 11): a writecache device
 * over two file devices, 4 threads writing and reading back checksummed blocks through it, while
 * the {@code dev.strata.cache.writecache} bundle is updated and refreshed again and again. The
 * cache (8 MiB ≈ 2000 slots) is smaller than the working set (4096 blocks), so the cache runs full
 * (write-around, forwarded flushes, writers writing back) and background writeback runs across
 * the updates. Zero I/O errors, zero mismatches; afterwards every block reads back as last
 * written, through the cache and — after a complete writeback — directly from the backing file.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class WritecacheHotUpdateIT {
    private static final String BSN = "dev.strata.cache.writecache";
    private static final int UPDATES = 5;

    @Inject
    BundleContext context;

    @Inject
    DeviceManager manager;

    @Configuration
    public Option[] config() {
        return StrataOptions.distribution(StrataOptions.workDir("writecache-hot-update"));
    }

    @Test
    public void updatingTheWritecacheBundleUnderLoadLosesNothing() throws Exception {
        CacheUnderCheckedLoad load = new CacheUnderCheckedLoad(context, manager, "writecache", "wc");
        load.run("bundle updates", "8M", Map.of(), UPDATES, load.hotUpdate(BSN));
    }
}
