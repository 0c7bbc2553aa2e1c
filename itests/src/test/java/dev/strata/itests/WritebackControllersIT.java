package dev.strata.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
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
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;

import dev.strata.api.WritebackController;
import dev.strata.api.WritebackController.CacheLoad;
import dev.strata.api.WritebackController.Decision;

/**
 * The daemons bundle in a real Felix: its three controllers register by name, a cache can look
 * each up by {@code (strata.controller=NAME)} and pace itself with a session, and stopping the
 * bundle takes them away until it starts again (what a cache's fallback has to cope with).
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class WritebackControllersIT {
    private static final String BSN = "dev.strata.daemons";
    private static final List<String> NAMES = List.of("modulator", "pi", "idle");

    @Inject
    BundleContext context;

    @Configuration
    public Option[] config() {
        return StrataOptions.distribution(StrataOptions.workDir("writeback-controllers"));
    }

    @Test
    public void eachControllerRegistersByNameAndPacesACache() throws Exception {
        for (String name : NAMES) {
            Await.until(name + " registered", 60, () -> lookUp(name).size() == 1, () -> "found " + lookUp(name));
            ServiceReference<WritebackController> ref = lookUp(name).iterator().next();
            assertEquals(BSN, ref.getBundle().getSymbolicName());
            assertTrue("a description for cache:controllers", String.valueOf(ref.getProperty("service.description")).length() > 10);
            WritebackController c = context.getService(ref);
            try (WritebackController.Session s = c.open("it-" + name, Map.of())) {
                // a cache 10 % over pi's target, its front end idle for a minute, device idle
                Decision d = s.decide(new CacheLoad(System.nanoTime(), 2000, 10_000, 4096, 0, 0, 0, 60_000, 256));
                assertTrue(name + " lets an idle, dirty cache write back: " + d, d.blocks() > 0);
                assertTrue(d.blocks() <= 256);
                assertEquals(name, s.status().get("controller"));
            } finally {
                context.ungetService(ref);
            }
        }
    }

    @Test
    public void stoppingTheBundleTakesTheControllersAwayAndStartingItBringsThemBack() throws Exception {
        Bundle daemons = bundle();
        for (String name : NAMES) {
            Await.until(name + " registered", 60, () -> lookUp(name).size() == 1);
        }
        daemons.stop();
        try {
            for (String name : NAMES) {
                assertTrue(name + " gone with its bundle", lookUp(name).isEmpty());
            }
        } finally {
            daemons.start();
        }
        for (String name : NAMES) {
            Await.until(name + " back", 60, () -> lookUp(name).size() == 1);
        }
    }

    private Collection<ServiceReference<WritebackController>> lookUp(String name) {
        try {
            return new ArrayList<>(context.getServiceReferences(WritebackController.class,
                    "(" + WritebackController.NAME + "=" + name + ")"));
        } catch (InvalidSyntaxException e) {
            throw new AssertionError(e);
        }
    }

    private Bundle bundle() {
        for (Bundle b : context.getBundles()) {
            if (BSN.equals(b.getSymbolicName())) {
                return b;
            }
        }
        throw new AssertionError(BSN + " is not installed");
    }
}
