package dev.strata.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

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
import org.osgi.framework.Constants;
import org.osgi.framework.wiring.BundleCapability;
import org.osgi.framework.wiring.BundleRevision;
import org.osgi.framework.wiring.BundleWiring;

/** The distribution's bundle set resolves in a real Felix and every bundle starts. */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class BundleSetIT {

    @Inject
    BundleContext context;

    @Configuration
    public Option[] config() {
        return StrataOptions.distribution(StrataOptions.workDir("bundle-set"));
    }

    @Test
    public void everyDistributionBundleIsActive() {
        Set<String> expected = new TreeSet<>();
        for (Path jar : StrataOptions.distributionBundles()) {
            expected.add(StrataOptions.symbolicName(jar));
        }
        assertTrue("the distribution ships the Strata bundles", expected.contains("dev.strata.core"));
        assertTrue(expected.contains("dev.strata.driver.file"));
        // libraries installed but never started (strata.start.never: gogo.jline) must be RESOLVED
        List<String> never = List.of(context.getProperty("strata.start.never").split(","));
        assertTrue(never.contains("org.apache.felix.gogo.jline"));
        List<String> notActive = new ArrayList<>();
        Set<String> seen = new TreeSet<>();
        for (Bundle b : context.getBundles()) {
            if (!expected.contains(b.getSymbolicName())) {
                continue;
            }
            seen.add(b.getSymbolicName());
            boolean fragment = b.getHeaders().get(Constants.FRAGMENT_HOST) != null;
            int want = fragment || never.contains(b.getSymbolicName()) ? Bundle.RESOLVED : Bundle.ACTIVE;
            if (b.getState() != want) {
                notActive.add(b.getSymbolicName() + " is " + state(b.getState()));
            }
        }
        assertEquals("every bundle of bundle/ is installed", expected, seen);
        assertTrue("not active: " + notActive, notActive.isEmpty());
    }

    @Test
    public void strataImplementationBundlesExportNothingButTheApi() {
        List<String> leaks = new ArrayList<>();
        for (Bundle b : context.getBundles()) {
            String bsn = b.getSymbolicName();
            if (bsn == null || !bsn.startsWith("dev.strata.")) {
                continue;
            }
            BundleWiring wiring = b.adapt(BundleWiring.class);
            for (BundleCapability c : wiring.getCapabilities(BundleRevision.PACKAGE_NAMESPACE)) {
                String pkg = (String) c.getAttributes().get(BundleRevision.PACKAGE_NAMESPACE);
                if (!(bsn.equals("dev.strata.api") && pkg.startsWith("dev.strata.api"))) {
                    leaks.add(bsn + " exports " + pkg);
                }
            }
        }
        assertTrue("DESIGN.md §13: implementation bundles export nothing: " + leaks, leaks.isEmpty());
    }

    @Test
    public void slf4jIsBoundThroughSpiFly() {
        // a NOP binding would mean the service-loader mediator is missing or starts too late
        String factory = org.slf4j.LoggerFactory.getILoggerFactory().getClass().getName();
        assertFalse("slf4j bound to " + factory + "; wiring:\n" + slf4jWiring(), factory.contains("NOP") || factory.contains("Substitute"));
        Set<String> providers = context.getBundles().length == 0 ? Set.of()
                : List.of(context.getBundles()).stream().map(Bundle::getSymbolicName).filter(n -> n != null && n.startsWith("slf4j."))
                        .collect(Collectors.toCollection(TreeSet::new));
        assertTrue(providers.toString(), providers.contains("slf4j.simple"));
    }

    private String slf4jWiring() {
        StringBuilder out = new StringBuilder();
        for (Bundle b : context.getBundles()) {
            BundleWiring w = b.adapt(BundleWiring.class);
            if (w == null) {
                continue;
            }
            for (org.osgi.framework.wiring.BundleWire wire : w.getRequiredWires(null)) {
                if (String.valueOf(wire.getCapability().getAttributes()).contains("slf4j")) {
                    out.append(b.getSymbolicName()).append(" -> ").append(wire.getProvider().getSymbolicName()).append(' ')
                            .append(wire.getCapability().getAttributes()).append('\n');
                }
            }
        }
        return out.toString();
    }

    private static String state(int s) {
        return switch (s) {
            case Bundle.INSTALLED -> "INSTALLED (unresolved)";
            case Bundle.RESOLVED -> "RESOLVED";
            case Bundle.STARTING -> "STARTING";
            case Bundle.STOPPING -> "STOPPING";
            case Bundle.ACTIVE -> "ACTIVE";
            default -> "UNINSTALLED";
        };
    }
}
