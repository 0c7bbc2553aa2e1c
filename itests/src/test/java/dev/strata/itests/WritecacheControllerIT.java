package dev.strata.itests;

import static org.junit.Assert.assertEquals;

import java.util.Map;

import javax.inject.Inject;

import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;

import dev.strata.api.DeviceManager;

/**
 * A writecache bound to a controller of the daemons bundle in a real Felix (issue 11):
 * {@code writeback.controller=pi} on a cache that runs full under 4 threads of verified I/O (8 MiB
 * cache, 16 MiB working set), so background writeback between the watermarks asks the controller
 * before every batch. Three times: the cache is paced by {@code pi}; the
 * {@code dev.strata.daemons} bundle stops and the cache falls back to its built-in modulator
 * without an I/O error; the bundle starts and the cache binds {@code pi} again. Zero I/O errors,
 * zero mismatches, every block as last written through the cache and, after writeback, in the
 * backing file.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class WritecacheControllerIT {
    private static final String DAEMONS = "dev.strata.daemons";
    private static final String ACTIVE = "writeback.controller.active";
    private static final String FALLBACK = "writeback.controller.fallback";

    @Inject
    BundleContext context;

    @Inject
    DeviceManager manager;

    @Configuration
    public Option[] config() {
        return StrataOptions.distribution(StrataOptions.workDir("writecache-controller"));
    }

    @Test
    public void aCacheBoundToPiFallsBackWhenTheDaemonsStopAndRebindsWhenTheyStart() throws Exception {
        CacheUnderCheckedLoad load = new CacheUnderCheckedLoad(context, manager, "writecache", "wcpi");
        Bundle daemons = load.bundle(DAEMONS);
        // pause_writeback=0: the binding looks its controller up again only when writeback between
        // the watermarks asks it, and a cache this full sends writes around all the time, which
        // would hold that writeback (and the lookup) back for pause_writeback after each of them
        load.run("controller cycles", "8M", Map.of("writeback.controller", "pi", "pause_writeback", "0"), 3, i -> {
            Await.until("wcpi paced by pi (cycle " + (i + 1) + ")", 120,
                    () -> "pi".equals(load.status().get(ACTIVE)) && "false".equals(load.status().get(FALLBACK)),
                    () -> load.status().toString());
            daemons.stop();
            try {
                Await.until("wcpi on its fallback while the daemons are stopped (cycle " + (i + 1) + ")", 120,
                        () -> "true".equals(load.status().get(FALLBACK)) && !"pi".equals(load.status().get(ACTIVE)),
                        () -> load.status().toString());
            } finally {
                daemons.start();
            }
            Await.until("wcpi bound to pi again (cycle " + (i + 1) + ")", 120,
                    () -> "pi".equals(load.status().get(ACTIVE)) && "false".equals(load.status().get(FALLBACK)),
                    () -> load.status().toString());
        });
        assertEquals(Bundle.ACTIVE, daemons.getState());
    }
}
