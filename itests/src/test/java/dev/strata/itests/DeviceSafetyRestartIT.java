package dev.strata.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.junit.Test;
import org.osgi.framework.launch.Framework;

import dev.strata.api.DeviceManager;
import dev.strata.api.DeviceState;

/**
 * Across a framework restart (Felix launched twice over the same Configuration Admin state):
 * a tunable set with {@code dev:message} comes back, every device keeps its identity, a
 * definition written without one gets one on first load, and a transient device is gone.
 */
public class DeviceSafetyRestartIT {

    @Test
    public void tunablesAndIdentitiesSurviveARestartAndTransientDevicesDoNot() throws Exception {
        Path work = StrataOptions.workDir("device-safety-restart");
        String slowId;
        String legacyId;
        Framework first = RestartIT.launch(work);
        try {
            DeviceManager m = RestartIT.service(first, DeviceManager.class);
            Await.until("file and writeboost", 60, () -> m.targetTypes().stream()
                    .filter(t -> t.type().equals("file") || t.type().equals("writeboost")).count() == 2);
            m.create("slow", "file", Map.of("path", work.resolve("slow.img").toString(), "size", "64M", "create", "true"));
            m.create("fast", "file", Map.of("path", work.resolve("fast.img").toString(), "size", "32M", "create", "true"));
            m.create("wb0", "writeboost", Map.of("backing", "slow", "cache", "fast"));
            m.message("wb0", "writeback_threshold", "50");
            m.message("wb0", "sequential_cutoff", "1M", false);
            slowId = m.info("slow").orElseThrow().id();
            assertNotNull(slowId);
            // a definition as written before identities existed (a hand-written .cfg without id)
            Files.writeString(work.resolve("deploy/dev.strata.device-legacy.cfg"), "name=legacy\ntype=memory\narg.size=1M\n");
            Await.until("legacy up with an identity", 60, () -> m.info("legacy")
                    .map(d -> d.state() == DeviceState.ACTIVE && d.id() != null).orElse(false));
            legacyId = m.info("legacy").orElseThrow().id();
            String created = gogo(first, "dev:create --transient scratch memory size=1M");
            assertTrue(created, created.contains("transient"));
            assertTrue(m.info("scratch").isPresent());
        } finally {
            RestartIT.stop(first);
        }

        Framework second = RestartIT.launch(work);
        try {
            DeviceManager m = RestartIT.service(second, DeviceManager.class);
            Await.until("wb0 back", 120, () -> m.info("wb0").map(d -> d.state() == DeviceState.ACTIVE).orElse(false),
                    () -> m.list().toString());
            assertEquals("the persisted tunable", "50", m.status("wb0").get("writeback_threshold"));
            assertTrue("the one-off is not kept", !"1M".equals(m.status("wb0").get("sequential_cutoff"))
                    && !"1048576".equals(m.status("wb0").get("sequential_cutoff")));
            assertEquals(slowId, m.info("slow").orElseThrow().id());
            Await.until("legacy back", 60, () -> m.info("legacy").isPresent());
            assertEquals(legacyId, m.info("legacy").orElseThrow().id());
            assertTrue("the transient device is gone: " + m.list(), m.info("scratch").isEmpty());
        } finally {
            RestartIT.stop(second);
        }
    }

    /**
     * Runs a Gogo command in {@code fw}. The command processor's classes are the framework's
     * (Gogo is a bundle there), not this class path's, so it is called reflectively.
     */
    private static String gogo(Framework fw, String command) throws Exception {
        org.osgi.framework.BundleContext ctx = fw.getBundleContext();
        org.osgi.util.tracker.ServiceTracker<Object, Object> t = new org.osgi.util.tracker.ServiceTracker<>(ctx,
                ctx.createFilter("(objectClass=org.apache.felix.service.command.CommandProcessor)"), null);
        t.open(true); // all services: this class path has its own copy of Gogo's API classes
        Object processor = t.waitForService(60_000);
        assertNotNull("Gogo's command processor", processor);
        Await.until("dev:create registered", 60, () -> {
            try {
                return ctx.getAllServiceReferences((String) null,
                        "(&(osgi.command.scope=dev)(osgi.command.function=create))") != null;
            } catch (org.osgi.framework.InvalidSyntaxException e) {
                throw new AssertionError(e);
            }
        });
        java.lang.reflect.Method create = processor.getClass().getMethod("createSession", java.io.InputStream.class,
                java.io.OutputStream.class, java.io.OutputStream.class);
        Object session = create.invoke(processor, new java.io.ByteArrayInputStream(new byte[0]),
                new java.io.ByteArrayOutputStream(), new java.io.ByteArrayOutputStream());
        java.lang.reflect.Method execute = session.getClass().getMethod("execute", CharSequence.class);
        execute.setAccessible(true);
        try {
            return String.valueOf(execute.invoke(session, command));
        } finally {
            session.getClass().getMethod("close").invoke(session);
            t.close();
        }
    }
}
