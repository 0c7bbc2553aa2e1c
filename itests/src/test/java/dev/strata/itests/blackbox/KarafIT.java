package dev.strata.itests.blackbox;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.regex.Pattern;

import org.junit.Test;

/**
 * Strata embedded in a real Apache Karaf 4.4: Strata's features.xml (generated from the same
 * feature descriptors as everything else) is added and its features installed through Karaf's own
 * shell; a writeboost stack over two file devices is built and exported over NBD with Strata's
 * commands in Karaf's console; qemu-io verifies the data over NBD, and after {@code
 * cache:writeback} the backing file itself holds what was written.
 */
public class KarafIT {
    private static final long MiB = 1L << 20;

    @Test
    public void writeboostStackExportedFromKarafsShell() throws Exception {
        Clients.require("qemu-io");
        String features = Path.of(System.getProperty("strata.features.xml")).toUri().toString();
        try (Karaf karaf = Karaf.start("karaf")) {
            Path backing = karaf.work.resolve("backing0.img");
            Path cache = karaf.work.resolve("cache0.img");
            int nbd = Strata.freePort();

            karaf.shell("feature:repo-add " + features,
                    "feature:install strata-drivers strata-nbd strata-writeboost");
            String installed = karaf.print("feature:list -i");
            for (String f : new String[] {"strata-runtime", "strata-core", "strata-drivers", "strata-nbd", "strata-writeboost"}) {
                assertTrue(f + " not installed and started:\n" + installed,
                        Pattern.compile("(?m)^" + f + "\\s*\\|.*\\|\\s*Started\\s*\\|").matcher(installed).find());
            }
            // Strata's Gogo commands in Karaf's console
            String targets = karaf.print("dev:targets");
            assertTrue(targets, targets.contains("writeboost") && targets.contains("file"));

            karaf.shell("dev:create --transient backing0 file path=" + backing + " size=64M create=true",
                    "dev:create --transient cache0 file path=" + cache + " size=32M create=true",
                    "dev:create --transient wb0 writeboost backing=backing0 cache=cache0",
                    "nbd:export wb0 --port " + nbd);
            String list = karaf.print("dev:list");
            assertTrue(list, Pattern.compile("(?m)^wb0\\s+writeboost\\s+64\\.0 MiB\\s+active").matcher(list).find());
            Strata.awaitPort(nbd);

            String uri = Clients.uri(nbd, "wb0");
            Clients.qemuIo(karaf.work, uri, 64 * MiB, 0);
            // a region no other check touches: written over NBD, then written back by writeboost to the file
            Clients.run(karaf.work, "qemu-io", "-f", "raw", "-c", "write -P 0xc7 " + 40 * MiB + " 2M",
                    "-c", "flush", uri).ok();
            Clients.run(karaf.work, "qemu-io", "-f", "raw", "-c", "read -P 0xc7 " + 40 * MiB + " 2M", uri).ok();

            karaf.shell("cache:writeback wb0");
            String stats = karaf.print("cache:stats wb0");
            assertTrue(stats, stats.contains("wb0"));
            karaf.shell("nbd:unexport wb0", "dev:remove wb0", "dev:remove cache0", "dev:remove backing0");

            byte[] region = new byte[(int) (2 * MiB)];
            try (RandomAccessFile f = new RandomAccessFile(backing.toFile(), "r")) {
                f.seek(40 * MiB);
                f.readFully(region);
            }
            byte[] expected = new byte[region.length];
            Arrays.fill(expected, (byte) 0xc7);
            assertTrue("the backing file does not hold the written-back data", Arrays.equals(expected, region));
            assertEquals(64 * MiB, Files.size(backing));
        }
    }
}
