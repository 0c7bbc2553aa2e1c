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
 * DESIGN.md §3, hot update of a policy bundle, for the writeboost cache (issue 5): a writeboost
 * device over two file devices, 4 threads writing and reading back checksummed blocks through it,
 * while the {@code dev.strata.cache.writeboost} bundle is updated and refreshed again and again.
 * The cache is small (17 segments ≈ 4300 blocks for 4096 blocks of working set plus overwrites), so
 * the log wraps and writeback and reclaim run across the updates too. Zero I/O errors, zero
 * mismatches; afterwards every block reads back as last written, through the cache and — after a
 * complete writeback — directly from the backing file.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class WriteboostHotUpdateIT {
    private static final String BSN = "dev.strata.cache.writeboost";
    private static final int UPDATES = 5;

    @Inject
    BundleContext context;

    @Inject
    DeviceManager manager;

    @Configuration
    public Option[] config() {
        return StrataOptions.distribution(StrataOptions.workDir("writeboost-hot-update"));
    }

    @Test
    public void updatingTheWriteboostBundleUnderLoadLosesNothing() throws Exception {
        CacheUnderCheckedLoad load = new CacheUnderCheckedLoad(context, manager, "writeboost", "wb");
        load.run("bundle updates", "18M", Map.of(), UPDATES, load.hotUpdate(BSN));
    }
}
