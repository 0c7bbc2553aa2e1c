package dev.strata.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.BlockDevice;
import dev.strata.api.StatusSource;
import dev.strata.api.Target;
import dev.strata.api.TargetContext;
import dev.strata.api.TargetFactory;
import dev.strata.core.internal.jmx.JmxProbe;
import dev.strata.nbd.internal.client.NbdTargetFactory;
import dev.strata.nbd.internal.command.ExportService;
import dev.strata.nbd.internal.command.ExportStore;
import dev.strata.nbd.internal.server.NbdServer;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;

/**
 * An NBD export's request latency percentiles, read back through the platform MBean server after
 * real I/O from the real NBD client. The exported device takes at least {@link #DELAY_MICROS}
 * per request (it spins on the clock), so every percentile has a known floor: the test checks
 * that what is published is what was measured, not how fast anything ran.
 */
class ExportLatencyJmxTest extends ManagerFixture {
    static final long DELAY_MICROS = 3000;
    private final MBeanServer server = ManagementFactory.getPlatformMBeanServer();
    private final String domain = "dev.strata.test" + ProcessHandle.current().pid() + "l" + System.nanoTime();

    /** {@code tslow path=… size=…}: a tfile whose every read, write and flush takes at least DELAY_MICROS. */
    static final class SlowFactory implements TargetFactory {
        final TestTargets.FileFactory files = new TestTargets.FileFactory();

        @Override
        public String usage() {
            return "tslow path=FILE size=SIZE";
        }

        @Override
        public List<String> lowerDevices(Map<String, String> arguments) {
            return List.of();
        }

        @Override
        public Target create(TargetContext context) throws IOException {
            Target t = files.create(context);
            return new Target() {
                @Override
                public String type() {
                    return "tslow";
                }

                @Override
                public Map<String, String> status() {
                    return t.status();
                }

                @Override
                public void close() throws IOException {
                    t.close();
                }

                @Override
                public long size() {
                    return t.size();
                }

                @Override
                public int blockSize() {
                    return t.blockSize();
                }

                @Override
                public void read(long offset, ByteBuffer dst) throws IOException {
                    spin();
                    t.read(offset, dst);
                }

                @Override
                public void write(long offset, ByteBuffer src, int flags) throws IOException {
                    spin();
                    t.write(offset, src, flags);
                }

                @Override
                public void flush() throws IOException {
                    spin();
                    t.flush();
                }

                @Override
                public void discard(long offset, long length) throws IOException {
                    t.discard(offset, length);
                }

                @Override
                public void writeZeroes(long offset, long length, int flags) throws IOException {
                    t.writeZeroes(offset, length, flags);
                }
            };
        }

        /** Waits until the clock has moved DELAY_MICROS on: a floor on the request's latency. */
        private static void spin() {
            long until = System.nanoTime() + TimeUnit.MICROSECONDS.toNanos(DELAY_MICROS);
            while (System.nanoTime() - until < 0) {
                Thread.onSpinWait();
            }
        }
    }

    record Ctx(String deviceName, Map<String, String> arguments) implements TargetContext {
        @Override
        public BlockDevice lowerDevice(String name) {
            throw new IllegalArgumentException(name);
        }
    }

    @Test
    void exportLatencyPercentilesAreMBeanAttributesAfterRealIo() throws Exception {
        m.addFactory(TestTargets.entry(new SlowFactory(), "tslow"));
        m.create("slow0", "tslow", args("path", dir.resolve("slow0.img").toString(), "size", "1M"));
        ExportStore noStore = new ExportStore() {
            @Override
            public String create(dev.strata.nbd.internal.command.ExportSpec spec) {
                return "pid-1";
            }

            @Override
            public void delete(String id) {
            }
        };
        NbdServer nbd = new NbdServer();
        ExportService exports = new ExportService(m, noStore, nbd, null, 20);
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        // the rows of nbd:exports by name, as the nbd bundle's ExportStatusSource hands them to core
        StatusSource source = () -> {
            Map<String, Map<String, String>> out = new LinkedHashMap<>();
            for (Map<String, String> row : exports.status()) {
                out.put(row.get("name"), row);
            }
            return out;
        };
        JmxProbe p = JmxProbe.start(domain, m, source, "Export");
        try {
            exports.export("slow0", "", null, port, false);
            ObjectName name = new ObjectName(domain + ":type=Export,name=slow0");
            p.sync();
            assertEquals(0L, server.getAttribute(name, "write_latency_us_max"), "before any request");

            Target client = new NbdTargetFactory().create(new Ctx("c0", Map.of("uri", "nbd://127.0.0.1:" + port + "/slow0")));
            try {
                byte[] b = new byte[4096];
                for (int i = 0; i < 40; i++) {
                    b[0] = (byte) i;
                    client.write(i * 4096L, ByteBuffer.wrap(b), 0);
                    ByteBuffer r = ByteBuffer.allocate(4096);
                    client.read(i * 4096L, r);
                    assertEquals((byte) i, r.get(0));
                    if (i % 8 == 7) {
                        client.flush();
                    }
                }
            } finally {
                client.close();
            }
            p.sync();
            for (String op : List.of("read", "write", "flush")) {
                long p50 = (Long) server.getAttribute(name, op + "_latency_us_p50");
                long p99 = (Long) server.getAttribute(name, op + "_latency_us_p99");
                long p999 = (Long) server.getAttribute(name, op + "_latency_us_p999");
                Object max = server.getAttribute(name, op + "_latency_us_max");
                assertInstanceOf(Long.class, max);
                // HdrHistogram at 2 significant digits: a value is reported within 1 % below
                assertTrue(p50 >= DELAY_MICROS * 99 / 100, op + " p50 " + p50);
                assertTrue(p50 <= p99 && p99 <= p999 && p999 <= (Long) max, op + ": " + p50 + " " + p99 + " " + p999 + " " + max);
            }
            // 40 writes, 40 reads, 5 flushes (and the client's flush at close)
            assertTrue((Long) server.getAttribute(name, "requests") >= 85L);
        } finally {
            p.stop();
            exports.close();
            nbd.close();
        }
    }
}
