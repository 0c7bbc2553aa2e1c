import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.zip.CRC32C;

/**
 * An experiment for issue 10, goal 1 (not a test): does the writers' copying slow the cache
 * device's 4 MiB log writes? In writeboost's in-process rounds each 4 MiB write took 4.9-5.3 ms
 * against 4.2-4.8 ms for the reference's writes of the same size and depth. This runs the
 * reference's shape (two threads writing 4 MiB O_DIRECT requests in order into a fresh
 * fallocated 768 MiB file, then fdatasync) while {@code copiers} threads copy 4 KiB blocks from
 * the heap into a 16 MiB direct ring and CRC32C them, as writeboost's writers do, at
 * {@code rate} MiB/s in all (0: as fast as they can), and prints the write rate, the mean time
 * of one write and the copy rate. A fifth argument {@code ring} makes the writers take their
 * 4 MiB from successive windows of one 16 MiB ring, as writeboost's flushers do, instead of
 * each reusing a buffer of its own.
 *
 * <pre>
 * javac -d /tmp/cc itests/bench/writeboost/CopyContention.java
 * for c in "0 0" "8 2000" "0 0" "8 2000" "8 0"; do java -cp /tmp/cc CopyContention /var/tmp/cc.img $c 2; done
 * </pre>
 */
public final class CopyContention {
    private static volatile boolean stop;

    public static void main(String[] args) throws Exception {
        Path file = Path.of(args[0]);
        int copiers = Integer.parseInt(args[1]);
        long rateMiB = Long.parseLong(args[2]);
        int reps = Integer.parseInt(args[3]);
        boolean fromRing = args.length > 4 && args[4].equals("ring");
        long total = 768L << 20;
        int io = 4 << 20;
        ByteBuffer ring = ByteBuffer.allocateDirect(16 << 20);
        AtomicLong copied = new AtomicLong();
        Thread[] threads = new Thread[copiers];
        for (int t = 0; t < copiers; t++) {
            int id = t;
            threads[t] = new Thread(() -> copy(ring, id, copiers, rateMiB, copied));
            threads[t].start();
        }
        try {
            for (int rep = 0; rep < reps; rep++) {
                Files.deleteIfExists(file);
                if (new ProcessBuilder("fallocate", "-l", Long.toString(total), file.toString()).inheritIO().start().waitFor() != 0) {
                    throw new IllegalStateException("fallocate failed");
                }
                long c0 = copied.get();
                long t0 = System.nanoTime();
                double[] w = write(file, total, io, fromRing);
                double s = (System.nanoTime() - t0) / 1e9;
                System.out.printf(Locale.ROOT, "%s, copiers %d at %s: %.0f MiB/s, one 4 MiB write %.2f ms on average, copies %.0f MiB/s%n",
                        fromRing ? "from a 16 MiB ring" : "own buffers", copiers, rateMiB == 0 ? "full speed" : rateMiB + " MiB/s", total / s / (1 << 20), w[0],
                        (copied.get() - c0) * 4096.0 / s / (1 << 20));
            }
        } finally {
            stop = true;
            Files.deleteIfExists(file);
        }
    }

    /** Copies 4 KiB blocks into this copier's share of the ring and CRCs each, paced to its share of the rate. */
    private static void copy(ByteBuffer ring, int id, int copiers, long rateMiB, AtomicLong copied) {
        byte[] block = new byte[4096];
        new Random(id).nextBytes(block);
        ByteBuffer src = ByteBuffer.wrap(block);
        CRC32C crc = new CRC32C();
        long perSecond = rateMiB * 256 / copiers;
        long t0 = System.nanoTime();
        int pos = id * 4096;
        for (long n = 1; !stop; n++) {
            ring.put(pos, src, 0, 4096);
            crc.reset();
            crc.update(ring.duplicate().position(pos).limit(pos + 4096));
            pos = (pos + copiers * 4096) % ring.capacity();
            if (n % 64 == 0) {
                copied.addAndGet(64);
                if (rateMiB > 0) {
                    long wait = t0 + n * 1_000_000_000L / perSecond - System.nanoTime();
                    if (wait > 0) {
                        LockSupport.parkNanos(wait);
                    }
                }
            }
        }
    }

    /** The reference's shape: two writers taking the next 4 MiB in order; returns {mean ms per write}. */
    private static double[] write(Path file, long total, int io, boolean fromRing) throws Exception {
        ByteBuffer ring = ByteBuffer.allocateDirect(4 * io + 4096).alignedSlice(4096);
        AtomicLong next = new AtomicLong();
        AtomicLong nanos = new AtomicLong();
        AtomicLong writes = new AtomicLong();
        ExecutorService ex = Executors.newFixedThreadPool(2);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE,
                com.sun.nio.file.ExtendedOpenOption.DIRECT)) {
            Future<?>[] f = new Future<?>[2];
            for (int t = 0; t < 2; t++) {
                ByteBuffer own = ByteBuffer.allocateDirect(io + 4096).alignedSlice(4096).limit(io).slice();
                f[t] = ex.submit(() -> {
                    for (long o; (o = next.getAndAdd(io)) < total; ) {
                        int w = (int) (o / io % 4);
                        ByteBuffer b = fromRing ? ring.duplicate().position(w * io).limit((w + 1) * io) : own.clear();
                        long s = System.nanoTime();
                        while (b.hasRemaining()) {
                            o += ch.write(b, o);
                        }
                        nanos.addAndGet(System.nanoTime() - s);
                        writes.incrementAndGet();
                    }
                    return null;
                });
            }
            for (Future<?> x : f) {
                x.get();
            }
            ch.force(false);
        } finally {
            ex.shutdown();
        }
        return new double[] {nanos.get() / 1e6 / writes.get()};
    }
}
