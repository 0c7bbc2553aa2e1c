package dev.strata.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.StatusSource;
import dev.strata.core.internal.jmx.JmxProbe;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.Map;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;

/** The MBeans read back through the platform MBean server, as jconsole or a JMX exporter would. */
class JmxPublisherTest extends ManagerFixture {
    private final MBeanServer server = ManagementFactory.getPlatformMBeanServer();
    private final String domain = "dev.strata.test" + ProcessHandle.current().pid() + "x" + System.nanoTime();

    @Test
    void devicesCachesAndExportsAreMBeansWithTypedAttributes() throws Exception {
        cacheStack();
        StatusSource exports = () -> Map.of("wb0", Map.of("device", "wb0", "requests", "42", "connections", "1"));
        JmxProbe p = JmxProbe.start(domain, m, exports, "Export");
        try {
            p.sync();
            ObjectName wb0 = new ObjectName(domain + ":type=Device,name=wb0");
            ObjectName disk0 = new ObjectName(domain + ":type=Device,name=disk0");
            ObjectName export = new ObjectName(domain + ":type=Export,name=wb0");
            assertTrue(server.isRegistered(wb0));
            assertTrue(server.isRegistered(disk0));
            assertEquals("ACTIVE", server.getAttribute(wb0, "state"));
            assertEquals("tcache", server.getAttribute(wb0, "type"));
            assertEquals(0L, server.getAttribute(wb0, "dirty_blocks")); // the cache's own counter, a Long
            assertEquals(1L << 20, server.getAttribute(disk0, "size"));
            MBeanAttributeInfo dirty = Arrays.stream(server.getMBeanInfo(wb0).getAttributes())
                    .filter(a -> a.getName().equals("dirty_blocks")).findFirst().orElseThrow();
            assertEquals("java.lang.Long", dirty.getType());
            assertEquals(42L, server.getAttribute(export, "requests"));
            assertEquals("wb0", server.getAttribute(export, "device"));

            m.suspend("wb0");
            assertEquals("SUSPENDED", server.getAttribute(wb0, "state")); // read live, not a copy
            m.resume("wb0");
            m.remove("wb0");
            p.sync();
            assertFalse(server.isRegistered(wb0), "a removed device's MBean stays");
            assertTrue(server.isRegistered(disk0));
        } finally {
            p.stop();
        }
        assertEquals(0, server.queryNames(new ObjectName(domain + ":*"), null).size(), "MBeans left after stop");
    }
}
