package dev.strata.mirror.internal.log.zk;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.mirror.internal.io.MirrorTarget;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Two Strata processes share one {@code zookeeper:} log and the same two leg files, each writing
 * its own regions. One is SIGKILLed; the other takes its marks over when its session expires and
 * resyncs exactly the dead node's dirty regions; then both legs are identical and hold every
 * write either node acknowledged.
 */
class ClusterProcessTest extends ZkFixture {
    static final long SIZE = 64 * REGION;
    final ExecutorService pool = Executors.newCachedThreadPool();
    Process child;

    @AfterEach
    void kill() {
        if (child != null) {
            child.destroyForcibly();
        }
        pool.shutdownNow();
    }

    @Test
    void theSurvivorResyncsExactlyTheKilledNodesDirtyRegions() throws Exception {
        Path dir = Files.createTempDirectory(Files.createDirectories(Path.of("target", "zk")), "cluster");
        Path fa = dir.resolve("leg-a.img");
        Path fb = dir.resolve("leg-b.img");
        FileLeg la = new FileLeg(fa, SIZE);
        FileLeg lb = new FileLeg(fb, SIZE);
        toClose.add(la);
        toClose.add(lb);
        // node B, here: manual, so the test decides when it takes the dead node's marks over
        ZooKeeperLog logB = log("B");
        MirrorTarget b = mirror("B", logB, List.of(la, lb), true);

        // node A, a process of its own, writing regions 0..31
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        child = new ProcessBuilder(java, "-Xmx256m", "-cp", System.getProperty("java.class.path"), ClusterNodeMain.class.getName(),
                server.connect(), path, "A", fa.toString(), fb.toString(), Long.toString(SIZE), "0", "31")
                .redirectError(ProcessBuilder.Redirect.appendTo(dir.resolve("node-a.err").toFile())).start();
        Map<Long, Long> ackedA = new HashMap<>();
        AtomicLong acks = new AtomicLong();
        AtomicBoolean killed = new AtomicBoolean();
        Future<?> reader = pool.submit(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null;) {
                    String[] w = line.split(" ");
                    if (w[0].equals("ACK")) {
                        synchronized (ackedA) {
                            ackedA.put(Long.parseLong(w[1]), Long.parseLong(w[2]));
                        }
                        acks.incrementAndGet();
                    }
                }
            } catch (IOException e) {
                // Process.destroyForcibly() closes the child's streams right after sending SIGKILL,
                // while this thread may still be reading ("Stream closed") and before the child is
                // reaped (so isAlive() may still say true): the acks read until then are the ones
                // verified.
                if (!killed.get()) {
                    throw e;
                }
            }
            return null;
        });

        // B writes regions 32..63 meanwhile
        Map<Long, Long> ackedB = new HashMap<>();
        AtomicBoolean stopB = new AtomicBoolean();
        Future<?> writerB = pool.submit(() -> {
            Random rnd = new Random(3);
            for (long seq = 1; !stopB.get(); seq++) {
                long off = (32 + rnd.nextInt(32)) * REGION + rnd.nextInt(16) * 4096L;
                b.write(off, ByteBuffer.allocate(4096).putLong(0, off).putLong(8, seq), 0);
                ackedB.put(off, seq);
                if (seq % 8 == 0) {
                    b.flush();
                }
            }
            return null;
        });

        await("node A's writes", () -> acks.get() > 400);
        killed.set(true);
        child.destroyForcibly(); // SIGKILL
        assertTrue(child.waitFor(60, TimeUnit.SECONDS));
        reader.get();
        ZooKeeper zk = client();
        await("node A's session to expire", () -> {
            try {
                return zk.exists(path + "/members/A", false) == null;
            } catch (Exception e) {
                return false;
            }
        });
        // what A had marked when it died (nobody writes there now: A's session is gone)
        BitSet dirtyA = new BitSet();
        ZnodeLayout z = new ZnodeLayout(path);
        ZnodeLayout.readChunk(zk.getData(z.chunk("A", 0), false, null), 0, 64, dirtyA);
        assertFalse(dirtyA.isEmpty(), "A died with marks");
        assertEquals(-1, dirtyA.nextSetBit(32) , "A marked only its own regions");

        long bytesBefore = Long.parseLong(b.status().get("resync_bytes"));
        // the log's half of the takeover alone (the mirror's daemon runs it right before queueing
        // the work): the status already counts A's regions as pending, never "nothing to copy"
        logB.maintain();
        assertEquals("1", b.status().get("zk_recovered_nodes"));
        assertEquals(Integer.toString(dirtyA.cardinality()), b.status().get("resync_pending"),
                "taken over, not yet queued: still pending");
        assertEquals("0%", b.status().get("resync_progress"));
        assertTrue(b.clusterRunOnce(), "B queued node A's regions");
        assertEquals("1", b.status().get("zk_recovered_nodes"));
        assertEquals(Integer.toString(dirtyA.cardinality()), b.status().get("zk_recovered_regions"));
        assertEquals(Integer.toString(dirtyA.cardinality()), b.status().get("resync_pending"), "exactly A's dirty regions");
        BitSet held = b.dirtyRegions();
        BitSet missing = (BitSet) dirtyA.clone();
        missing.andNot(held);
        assertTrue(missing.isEmpty(), "B holds A's regions marked until they are resynced: " + missing);
        assertEquals(null, zk.exists(path + "/nodes/A", false), "A's marks are B's now");
        b.resyncAll();
        assertEquals((long) dirtyA.cardinality() * REGION, Long.parseLong(b.status().get("resync_bytes")) - bytesBefore,
                "resync copied exactly A's dirty regions");
        stopB.set(true);
        writerB.get();
        b.flush();

        byte[] x = Files.readAllBytes(fa);
        byte[] y = Files.readAllBytes(fb);
        assertArrayEquals(x, y, "both legs are identical");
        ByteBuffer leg = ByteBuffer.wrap(x);
        for (Map.Entry<Long, Long> e : ackedA.entrySet()) {
            assertTrue(leg.getLong((int) (e.getKey() + 8)) >= e.getValue(), "A's acknowledged write at " + e.getKey());
        }
        for (Map.Entry<Long, Long> e : ackedB.entrySet()) {
            assertEquals(e.getValue(), leg.getLong((int) (e.getKey() + 8)), "B's acknowledged write at " + e.getKey());
        }
        b.message("clear_delay", "0");
        b.flush();
        b.clearerRunOnce();
        assertEquals("0", b.status().get("dirty_regions"), "after the resync B's clears remove A's regions too");
        BitSet inZk = new BitSet();
        ZnodeLayout.readChunk(zk.getData(z.chunk("B", 0), false, null), 0, 64, inZk);
        assertTrue(inZk.isEmpty(), "no node has any region marked: every region is clean");
    }
}
