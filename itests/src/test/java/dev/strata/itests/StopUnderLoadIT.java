package dev.strata.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.Test;

/**
 * SIGTERM to {@code bin/strata --daemon} during random writes into a writeboost cache over a
 * slow ({@code spindle}, through a {@code linear} window) backing device: the process exits 0, and after a new start every block
 * holds what was acknowledged before the last acknowledged flush (or a later write of it). The
 * stop's duration is printed (goal: well under 2 s whatever the backing device's speed), not
 * asserted: a loaded machine must not fail the test.
 */
public class StopUnderLoadIT {
    private static final int BLOCK = 4096;
    private static final int BLOCKS = 16384; // 64 MiB of the 256 MiB device
    private static final long WRITE_NANOS = TimeUnit.SECONDS.toNanos(12);

    @Test
    public void sigtermDuringRandomWritesIsPromptCleanAndLosesNothingFlushed() throws Exception {
        Distribution d = Distribution.copy("stop-under-load");
        int port = Distribution.freePort();
        Path deploy = d.home.resolve("deploy");
        Files.writeString(deploy.resolve("dev.strata.device-b0.cfg"), "name=b0\ntype=file\narg.path=var/b0.img\narg.size=256M\narg.create=true\n");
        Files.writeString(deploy.resolve("dev.strata.device-s0.cfg"), "name=s0\ntype=spindle\narg.device=b0\narg.rpm=5400\narg.seek_ms=8\n");
        Files.writeString(deploy.resolve("dev.strata.device-c0.cfg"), "name=c0\ntype=file\narg.path=var/c0.img\narg.size=48M\narg.create=true\n");
        // a linear window between: its factory (in dev.strata.core) goes away with the manager,
        // which must still close the cache above it first
        Files.writeString(deploy.resolve("dev.strata.device-l0.cfg"), "name=l0\ntype=linear\narg.device=s0\n");
        Files.writeString(deploy.resolve("dev.strata.device-w0.cfg"),
                "name=w0\ntype=writeboost\narg.backing=l0\narg.cache=c0\narg.writeback_threshold=10\n");
        Files.writeString(deploy.resolve("dev.strata.nbd.export-w0.cfg"), "device=w0\nname=w0\nport=" + port + "\n");

        Map<Integer, Long> durable = new HashMap<>(); // block -> generation acknowledged before the last acknowledged flush
        Map<Integer, Long> issued = new HashMap<>();  // block -> newest generation sent (acknowledged or not)
        Map<Integer, Long> ackedAtStop = new HashMap<>(); // block -> newest acknowledged generation
        long stopMillis;
        int writes = 0;
        int flushes = 0;
        Path err = d.home.getParent().resolve("stop-stderr.txt");
        try (Distribution.Daemon daemon = new Distribution.Daemon(d, err, "--daemon", "--no-default-stack")) {
            daemon.awaitLine("strata: ready", Distribution.RUN_TIMEOUT_SECONDS);
            Map<Integer, Long> acked = new HashMap<>();
            Random r = new Random(42);
            long generation = 0;
            AtomicBoolean signalled = new AtomicBoolean();
            AtomicLong signalledAt = new AtomicLong();
            ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
            // SIGTERM from another thread, so that it lands while a write is in flight (and writeback runs)
            timer.schedule(() -> {
                signalledAt.set(System.nanoTime());
                signalled.set(true);
                daemon.process.destroy();
            }, WRITE_NANOS, TimeUnit.NANOSECONDS);
            try (NbdWire nbd = new NbdWire(port, "w0")) {
                while (true) {
                    try {
                        if (++writes % 64 == 0) {
                            Map<Integer, Long> before = new HashMap<>(acked);
                            nbd.flush();
                            flushes++;
                            durable.putAll(before);
                        } else {
                            int b = r.nextInt(BLOCKS);
                            long g = ++generation;
                            issued.put(b, g);
                            nbd.write((long) b * BLOCK, pattern(b, g));
                            acked.put(b, g);
                        }
                    } catch (IOException e) {
                        if (!signalled.get()) {
                            throw e;
                        }
                        break; // the server went away: stop writing
                    }
                }
            }
            assertTrue("stopped within the deadline", daemon.process.waitFor(Distribution.RUN_TIMEOUT_SECONDS, TimeUnit.SECONDS));
            stopMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - signalledAt.get());
            timer.shutdown();
            ackedAtStop.putAll(acked);
            assertEquals("exit status after SIGTERM; stderr: " + Files.readString(err), 0, daemon.process.exitValue());
        }
        System.out.println("StopUnderLoadIT: " + writes + " requests (" + flushes + " flushes, " + durable.size()
                + " blocks flushed) over spindle; SIGTERM to exit: " + stopMillis + " ms");
        String log = Files.readString(d.var("log/strata.log"));
        assertTrue("the device manager stopped cleanly:\n" + log, log.contains("device manager stopped"));

        // a new start: every flushed block holds its flushed write or a later one of it
        Path err2 = d.home.getParent().resolve("stop-stderr-2.txt");
        try (Distribution.Daemon again = new Distribution.Daemon(d, err2, "--daemon", "--no-default-stack")) {
            again.awaitLine("strata: ready", Distribution.RUN_TIMEOUT_SECONDS);
            int checked = 0;
            try (NbdWire nbd = new NbdWire(port, "w0")) {
                for (Map.Entry<Integer, Long> e : durable.entrySet()) {
                    int b = e.getKey();
                    ByteBuffer got = ByteBuffer.wrap(nbd.read((long) b * BLOCK, BLOCK));
                    long gb = got.getLong(0);
                    long gg = got.getLong(8);
                    assertEquals("block " + b + " holds another block's data", b, gb);
                    assertTrue("block " + b + ": generation " + gg + ", flushed " + e.getValue() + ", newest sent " + issued.get(b),
                            gg >= e.getValue() && gg <= issued.get(b));
                    assertTrue("block " + b + " is torn", ByteBuffer.wrap(pattern(b, gg)).equals(got.rewind()));
                    checked++;
                }
            }
            // a clean stop closes the stack, which flushes it: acknowledged writes are there too
            int ackedOnly = 0;
            int lostAcked = 0;
            try (NbdWire nbd = new NbdWire(port, "w0")) {
                for (Map.Entry<Integer, Long> e : ackedAtStop.entrySet()) {
                    if (e.getValue().equals(durable.get(e.getKey()))) {
                        continue;
                    }
                    ackedOnly++;
                    long gg = ByteBuffer.wrap(nbd.read((long) e.getKey() * BLOCK, BLOCK)).getLong(8);
                    if (gg < e.getValue()) {
                        lostAcked++;
                    }
                }
            }
            System.out.println("StopUnderLoadIT: " + checked + " flushed blocks read back intact after the restart; "
                    + ackedOnly + " acknowledged after the last flush, " + lostAcked + " of them older after the restart");
            assertEquals("acknowledged writes lost by a clean stop", 0, lostAcked);
            again.process.destroy();
            assertTrue(again.process.waitFor(Distribution.RUN_TIMEOUT_SECONDS, TimeUnit.SECONDS));
            assertEquals(Files.readString(err2), 0, again.process.exitValue());
        }
    }

    /** A block that names itself: its number and the write's generation, then bytes derived from both. */
    private static byte[] pattern(long block, long generation) {
        ByteBuffer b = ByteBuffer.allocate(BLOCK);
        b.putLong(block).putLong(generation);
        Random r = new Random(block * 1_000_003L + generation);
        byte[] rest = new byte[BLOCK - 16];
        r.nextBytes(rest);
        b.put(rest);
        return b.array();
    }
}
