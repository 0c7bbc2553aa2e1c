package dev.strata.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import java.io.InputStream;
import java.nio.file.Files;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.FrameworkEvent;
import org.osgi.framework.wiring.FrameworkWiring;

/** The bundle steps of the hot-update ITs: find a bundle, update it from the distribution's jar, refresh and wait. */
final class Bundles {
    private Bundles() {
    }

    /** The installed (not uninstalled) bundle {@code bsn}, or null. */
    static Bundle find(BundleContext context, String bsn) {
        for (Bundle b : context.getBundles()) {
            if (bsn.equals(b.getSymbolicName()) && b.getState() != Bundle.UNINSTALLED) {
                return b;
            }
        }
        return null;
    }

    /** The installed bundle {@code bsn}; the test fails if there is none. */
    static Bundle installed(BundleContext context, String bsn) {
        Bundle b = find(context, bsn);
        assertNotNull(bsn + " installed", b);
        return b;
    }

    /** Updates {@code bsn} in place from its jar in the distribution, refreshes it, and checks it is active again. */
    static void updateAndRefresh(BundleContext context, String bsn, String step) throws Exception {
        Bundle bundle = installed(context, bsn);
        try (InputStream in = Files.newInputStream(StrataOptions.bundleJar(bsn))) {
            bundle.update(in);
        }
        refresh(context, bundle, step);
        assertEquals(bsn + " active after " + step, Bundle.ACTIVE, bundle.getState());
    }

    /** Refreshes {@code bundle} (and what wires to it) and waits until the framework says it is done. */
    static void refresh(BundleContext context, Bundle bundle, String step) throws InterruptedException {
        CountDownLatch refreshed = new CountDownLatch(1);
        context.getBundle(0).adapt(FrameworkWiring.class).refreshBundles(List.of(bundle), e -> {
            if (e.getType() == FrameworkEvent.PACKAGES_REFRESHED) {
                refreshed.countDown();
            }
        });
        assertTrue("refresh " + step + " finished", refreshed.await(120, TimeUnit.SECONDS));
    }
}
