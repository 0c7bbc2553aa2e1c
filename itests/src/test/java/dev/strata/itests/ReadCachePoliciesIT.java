package dev.strata.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;

import java.io.InputStream;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

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
import org.osgi.framework.FrameworkEvent;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.wiring.FrameworkWiring;

import dev.strata.api.ReadCachePolicy;
import dev.strata.api.ReadCachePolicy.Contents;
import dev.strata.api.ReadCachePolicy.Instance;

/**
 * The read-cache policies bundle of the distribution registers its policies as services by name
 * in a real Felix, each one serves a cache through the API alone, and after an update of the
 * bundle the same names are back (what a read cache bound by name relies on).
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class ReadCachePoliciesIT {
    private static final String BSN = "dev.strata.readcache.policies";
    private static final List<String> NAMES = List.of("lru", "nhit", "wtinylfu");

    @Inject
    BundleContext context;

    @Configuration
    public Option[] config() {
        return StrataOptions.distribution(StrataOptions.workDir("readcache-policies"));
    }

    private TreeSet<String> registeredNames() {
        try {
            Collection<ServiceReference<ReadCachePolicy>> refs = context.getServiceReferences(ReadCachePolicy.class, null);
            TreeSet<String> names = new TreeSet<>();
            for (ServiceReference<ReadCachePolicy> r : refs) {
                names.add(String.valueOf(r.getProperty(ReadCachePolicy.NAME)));
            }
            return names;
        } catch (InvalidSyntaxException e) {
            throw new AssertionError(e);
        }
    }

    private ReadCachePolicy byName(String name) throws InvalidSyntaxException {
        Collection<ServiceReference<ReadCachePolicy>> refs =
                context.getServiceReferences(ReadCachePolicy.class, "(" + ReadCachePolicy.NAME + "=" + name + ")");
        assertEquals("one service named " + name, 1, refs.size());
        return context.getService(refs.iterator().next());
    }

    @Test
    public void policiesRegisterByNameServeACacheAndComeBackAfterAnUpdate() throws Exception {
        Await.until("the policies registered", 60, () -> registeredNames().containsAll(NAMES), () -> registeredNames().toString());
        assertTrue("the default is shipped", registeredNames().contains(ReadCachePolicy.DEFAULT));
        for (String name : NAMES) {
            exercise(byName(name), name);
        }
        Bundle bundle = Arrays.stream(context.getBundles()).filter(b -> BSN.equals(b.getSymbolicName())).findFirst()
                .orElseThrow(() -> new AssertionError("no bundle " + BSN));
        long before = bundle.getLastModified();
        try (InputStream in = Files.newInputStream(StrataOptions.bundleJar(BSN))) {
            bundle.update(in);
        }
        CountDownLatch refreshed = new CountDownLatch(1);
        context.getBundle(0).adapt(FrameworkWiring.class).refreshBundles(List.of(bundle), e -> {
            if (e.getType() == FrameworkEvent.PACKAGES_REFRESHED) {
                refreshed.countDown();
            }
        });
        assertTrue("refresh finished", refreshed.await(120, TimeUnit.SECONDS));
        assertNotEquals("the bundle was updated", before, bundle.getLastModified());
        Await.until("the policies registered again", 60, () -> registeredNames().containsAll(NAMES), () -> registeredNames().toString());
        for (String name : NAMES) {
            exercise(byName(name), name);
        }
    }

    /** A 4-slot cache: fills through free slots, then hits; the instance reports its state. */
    private static void exercise(ReadCachePolicy policy, String name) {
        long[] keys = {Contents.EMPTY, Contents.EMPTY, Contents.EMPTY, Contents.EMPTY};
        Instance i = policy.open(Contents.of(keys), Map.of());
        for (long k = 0; k < 3; k++) {
            int s = i.onMiss(k);
            assertTrue(name + " promotes into a free slot of an empty cache", s >= 0 && keys[s] == Contents.EMPTY);
            keys[s] = k;
            i.onInsert(s, k);
        }
        i.onHit(0);
        assertEquals(name, i.status().get("policy"));
        assertTrue(i.heapBytes() > 0);
        assertTrue(policy.usage().startsWith(name));
        i.close();
    }
}
