package dev.strata.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.util.Iterator;
import java.util.Map;
import java.util.ServiceLoader;

import org.junit.Test;
import org.osgi.framework.Constants;
import org.osgi.framework.launch.Framework;
import org.osgi.framework.launch.FrameworkFactory;

/**
 * Which framework this test run's class path gives: Pax Exam's native container and RestartIT
 * take the first {@link FrameworkFactory} the service loader finds, so this proves the
 * {@code equinox} execution (itests/pom.xml) really runs the core tests on Equinox, and the
 * default one on Felix. Exactly one factory may be on the class path.
 */
public class FrameworkIT {

    @Test
    public void theClassPathHoldsExactlyTheExpectedFramework() throws Exception {
        String expected = System.getProperty("strata.framework.expected", "org.apache.felix.framework");
        Iterator<FrameworkFactory> it = ServiceLoader.load(FrameworkFactory.class).iterator();
        assertTrue("no framework factory on the class path", it.hasNext());
        FrameworkFactory factory = it.next();
        assertTrue("more than one framework factory on the class path", !it.hasNext());
        Framework f = factory.newFramework(Map.of(Constants.FRAMEWORK_STORAGE, StrataOptions.workDir("framework-" + expected).toString(),
                Constants.FRAMEWORK_STORAGE_CLEAN, Constants.FRAMEWORK_STORAGE_CLEAN_ONFIRSTINIT));
        f.init();
        try {
            assertEquals(expected, f.getSymbolicName());
        } finally {
            f.stop();
            f.waitForStop(60_000);
        }
    }
}
