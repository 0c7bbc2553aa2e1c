package dev.strata.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LauncherConfigTest {

    @TempDir
    Path dir;

    private LauncherConfig load(String text) throws Exception {
        Path f = dir.resolve("config.properties");
        Files.writeString(f, text);
        return LauncherConfig.load(f, Map.of("strata.home", "/opt/strata"));
    }

    @Test
    void substitutesHomeAndOtherKeys() throws Exception {
        LauncherConfig c = load("a=${strata.home}/var\nb=${a}/config\nc=${undefined.key.x}y\n");
        assertEquals("/opt/strata/var", c.get("a"));
        assertEquals("/opt/strata/var/config", c.get("b"));
        assertEquals("y", c.get("c"));
    }

    @Test
    void startLevelsByExactNameThenLongestPrefixThenDefault() throws Exception {
        LauncherConfig c = load(String.join("\n",
                "strata.startlevel.default=3",
                "strata.startlevel.org.apache.felix.*=2",
                "strata.startlevel.org.apache.felix.gogo.*=4",
                "strata.startlevel.org.apache.felix.gogo.shell=5", ""));
        assertEquals(5, c.startLevel("org.apache.felix.gogo.shell"));
        assertEquals(4, c.startLevel("org.apache.felix.gogo.runtime"));
        assertEquals(2, c.startLevel("org.apache.felix.scr"));
        assertEquals(3, c.startLevel("dev.strata.core"));
    }

    @Test
    void badStartLevelIsOneClearLine() throws Exception {
        LauncherConfig c = load("strata.startlevel.default=zero\n");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> c.startLevel("x"));
        assertTrue(e.getMessage().contains("strata.startlevel.default"), e.getMessage());
    }

    @Test
    void listsSplitOnCommasAndBlanks() throws Exception {
        assertEquals(List.of("a.cfg", "b.cfg", "c.cfg"), load("l=a.cfg, b.cfg  c.cfg\n").list("l"));
    }

    @Test
    void shippedConfigurationPutsTheShellLastAndStrataBeforeIt() throws Exception {
        LauncherConfig c = LauncherConfig.load(Path.of("src/main/dist/conf/config.properties"), Map.of("strata.home", "/h"));
        int shell = c.startLevel("org.apache.felix.gogo.shell");
        int strata = c.startLevel("dev.strata.core");
        assertTrue(c.startLevel("dev.strata.nbd") < shell);
        assertTrue(strata < shell, "Strata bundles must start before the shell");
        assertTrue(c.startLevel("slf4j.api") < c.startLevel("org.apache.felix.scr"), "logging before anything logs");
        assertTrue(c.startLevel("ch.qos.logback.classic") < strata);
        // shutdown comes down the levels: core closes the devices while the target bundles are there
        assertTrue(c.startLevel("dev.strata.driver.file") < strata);
        assertTrue(c.startLevel("dev.strata.cache.writeboost") < strata);
        assertTrue(c.startLevel("dev.strata.nbd") > strata, "exports close before the devices");
        assertTrue(c.startLevel("org.apache.felix.fileinstall") > strata);
        assertEquals(Integer.parseInt(c.get("org.osgi.framework.startlevel.beginning")), shell);
        assertEquals("/h/var/config", c.get("felix.cm.dir"));
        assertEquals("/h/deploy", c.get("felix.fileinstall.dir"));
        List<String> stack = c.list("strata.default.stack");
        assertEquals(List.of("dev.strata.device-backing0.cfg", "dev.strata.device-cache0.cfg", "dev.strata.device-wb0.cfg",
                "dev.strata.nbd.export-wb0.cfg"), stack);
        for (String file : stack) {
            assertTrue(Files.exists(Path.of("src/main/dist/deploy", file)), file);
        }
    }
}
