package dev.strata.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.Test;

/**
 * {@code cache:check} in the distribution's shell and {@code bin/strata-tool} on the files the
 * running service left: a damaged superblock byte found, repaired, and the service opens the
 * cache again.
 */
public class StrataToolIT {

    record Tool(int exit, String out, String err) {
        @Override
        public String toString() {
            return "exit " + exit + "\n--- stdout:\n" + out + "--- stderr:\n" + err;
        }
    }

    private static Tool tool(Distribution d, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(d.home.resolve("bin/strata-tool").toString());
        cmd.addAll(List.of(args));
        Path out = d.home.getParent().resolve("tool-out.txt");
        Path err = d.home.getParent().resolve("tool-err.txt");
        Process p = new ProcessBuilder(cmd).directory(d.home.getParent().toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("strata-tool " + String.join(" ", args) + " did not finish within 120 s");
        }
        return new Tool(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8));
    }

    @Test
    public void checkInTheShellThenDamageRepairAndReopenWithTheTool() throws Exception {
        Distribution d = Distribution.copy("strata-tool");
        Distribution.Result r = d.run("--no-default-stack", "-c",
                "dev:create b0 file path=var/b0.img size=64M create=true; dev:create c0 file path=var/c0.img size=32M create=true; "
                        + "dev:create wb0 writeboost backing=b0 cache=c0; dev:suspend wb0; cache:check wb0; dev:resume wb0");
        assertEquals(r.toString(), 0, r.exit());
        assertTrue(r.toString(), r.out().lines().anyMatch(l -> l.equals("wb0: clean")));

        String cache = d.var("c0.img").toString();
        Tool check = tool(d, "check", cache);
        assertEquals(check.toString(), 0, check.exit());
        assertEquals(check.toString(), "ok: " + cache + " holds a writeboost that checks clean (its superblock and all its "
                + "metadata read; 32.0 MiB; nothing written)\n", check.out());
        Tool dump = tool(d, "dump", "--json", cache);
        assertEquals(dump.toString(), 0, dump.exit());
        assertTrue(dump.toString(), dump.out().startsWith("{\"policy\":\"writeboost\""));

        try (RandomAccessFile f = new RandomAccessFile(cache, "rw")) {
            f.seek(200);
            int b = f.read();
            f.seek(200);
            f.write(b ^ 0x40);
        }
        Distribution.Result refused = d.run("--no-default-stack", "-c", "dev:list");
        assertFalse("the damaged cache is not opened: " + refused,
                refused.out().lines().anyMatch(l -> l.matches("wb0\\s+writeboost.*active.*")));
        check = tool(d, "check", cache);
        assertEquals(check.toString(), 1, check.exit());
        assertEquals(check.toString(), 1, check.out().lines().count());
        // byte 200 lies in the superblock's zero padding, which check reads in full
        assertTrue(check.toString(), check.out().startsWith("superblock: zero byte 200 is damaged"));
        Tool repair = tool(d, "repair", cache);
        assertEquals(repair.toString(), 0, repair.exit());
        assertTrue(repair.toString(), repair.out().contains("repaired: superblock zero byte 200 restored"));
        assertTrue(repair.toString(), repair.out().contains("nothing was lost"));
        assertEquals(0, tool(d, "check", cache).exit());

        Distribution.Result again = d.run("--no-default-stack", "-c", "dev:list");
        assertEquals(again.toString(), 0, again.exit());
        assertTrue("the repaired cache opens: " + again, again.out().lines().anyMatch(l -> l.matches("wb0\\s+writeboost.*active.*")));

        Tool bad = tool(d, "check");
        assertEquals(bad.toString(), 2, bad.exit());
        assertEquals(bad.toString(), 1, bad.err().lines().count());
        assertFalse(bad.toString(), bad.err().contains("Exception"));
    }
}
