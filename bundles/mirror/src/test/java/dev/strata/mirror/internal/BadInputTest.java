package dev.strata.mirror.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.strata.api.Claim;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Target;
import dev.strata.testsupport.crash.CrashableDevice;
import dev.strata.testsupport.target.SimpleTargetContext;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/** Bad input: one clear line, and nothing written to any device. */
class BadInputTest {
    final Devices.Counting a = new Devices.Counting(new CrashableDevice("a", 4 << 20, 4096));
    final Devices.Counting b = new Devices.Counting(new CrashableDevice("b", 4 << 20, 4096));
    final Devices.Counting small = new Devices.Counting(new CrashableDevice("small", 8192, 4096));
    final Devices.Counting log = new Devices.Counting(new CrashableDevice("log", 64 * 1024, 4096));

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "legs=a region_size=64k log=core | mirror: legs=a names one device; a mirror needs at least two, e.g. legs=a,b",
        "legs=a,a region_size=64k log=core | mirror: legs= names 'a' twice; give each leg once",
        "legs=a,,b region_size=64k log=core | mirror: legs=a,,b has an empty name; give device names separated by commas",
        "legs=a,b region_size=12k log=core | mirror: region_size=12k is not a power of two multiple of 4096 up to 1G; use e.g. 64k, 512k or 4M",
        "legs=a,b region_size=2048 log=core | mirror: region_size=2048 is not a power of two multiple of 4096 up to 1G; use e.g. 64k, 512k or 4M",
        "legs=a,b region_size=64k log=disk:small | mirror: log device 'small' holds 8192 bytes; 64 regions need at least 12288",
        "legs=a,b region_size=64k log=disk:a | mirror: log device 'a' is also a leg; give the log its own device",
        "legs=a,b region_size=64k log=zookeeper:127.0.0.1:2181 | mirror: log=zookeeper:127.0.0.1:2181 needs servers and a path; use log=zookeeper:HOST:PORT[,HOST:PORT…]/PATH, e.g. zookeeper:127.0.0.1:2181/strata/m0",
        "legs=a,b region_size=64k log=zookeeper:zk1:99999/m | mirror: log=zookeeper:zk1:99999/m has a bad port in 'zk1:99999'; use log=zookeeper:HOST:PORT[,HOST:PORT…]/PATH, e.g. zookeeper:127.0.0.1:2181/strata/m0",
        "legs=a,b region_size=64k log=zookeeper:zk1:2181/m/ | mirror: log=zookeeper:zk1:2181/m/ has a bad path '/m/'; use log=zookeeper:HOST:PORT[,HOST:PORT…]/PATH, e.g. zookeeper:127.0.0.1:2181/strata/m0",
        "legs=a,b region_size=64k log=zookeeper:zk1:2181/m node=a/b | mirror: node=a/b is not a name of letters, digits, '.', '_' or '-'",
        "legs=a,b region_size=64k log=zookeeper:zk1:2181/m session_timeout=5 | mirror: session_timeout=5 is out of range; allowed 1000 to 600000 ms",
        "legs=a,b region_size=64k log=zookeeper:zk1:2181/m session_timeout=10s | mirror: session_timeout=10s is not a whole number of milliseconds; e.g. session_timeout=10000",
        "legs=a,b region_size=64k log=zookeeper:zk1:2181/m zk_connect_timeout=-5 | mirror: zk_connect_timeout=-5 is out of range; allowed 1000 to 600000 ms",
        "legs=a,b region_size=64k log=zookeeper:zk1:2181/m zk_connect_timeout=0 | mirror: zk_connect_timeout=0 is out of range; allowed 1000 to 600000 ms",
        "legs=a,b region_size=64k log=core zk_connect_timeout=5000 | mirror: zk_connect_timeout= is for a cluster log; use it with log=zookeeper:HOST:PORT/PATH",
        "legs=a,b region_size=64k log=core node=n1 | mirror: node= is for a cluster log; use it with log=zookeeper:HOST:PORT/PATH",
        "legs=a,b region_size=64k log=tape | mirror: log=tape is unknown; use log=core, log=disk:DEV or log=zookeeper:HOST:PORT/PATH",
        "legs=a,b region_size=64k log=core read_policy=fastest | mirror: read_policy=fastest is unknown; use round_robin or least_loaded",
        "legs=a,b region_size=64k log=core clear_delay=-1 | mirror: clear_delay=-1 is out of range; allowed 0 to 3600000 ms",
        "legs=a,b log=core | mirror: missing argument 'region_size=…'",
        "legs=a,b region_size=64k log=core colour=red | mirror: unknown argument 'colour'; allowed: clear_delay, legs, log, node, nosync, read_policy, region_size, session_timeout, zk_connect_timeout",
    })
    void oneClearLineAndNothingWritten(String args, String message) {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> new MirrorFactory().create(
                SimpleTargetContext.of("m0", args).with("a", a).with("b", b).with("small", small).with("log", log)));
        assertEquals(message, e.getMessage());
        assertFalse(e.getMessage().contains("\n"));
        assertEquals(0, a.writes.get() + b.writes.get() + small.writes.get() + log.writes.get(), "nothing written");
    }

    @Test
    void aLogOfAnotherGeometryIsRefusedAndLeftAlone() throws IOException {
        Target t = new MirrorFactory().create(SimpleTargetContext.of("m0", "legs=a,b region_size=64k log=disk:log nosync=true")
                .with("a", a).with("b", b).with("log", log));
        t.close();
        int before = a.writes.get() + b.writes.get() + log.writes.get();
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> new MirrorFactory().create(
                SimpleTargetContext.of("m0", "legs=a,b region_size=128k log=disk:log").with("a", a).with("b", b).with("log", log)));
        assertEquals("mirror: log device 'log' belongs to a mirror of 2 legs, region_size=65536, 64 regions; "
                + "give the same legs and region_size, or wipe the log device", e.getMessage());
        assertEquals(before, a.writes.get() + b.writes.get() + log.writes.get());
    }

    @Test
    void aLogMadeWithOtherLegsIsRefused() throws IOException {
        Target t = new MirrorFactory().create(new IdContext("legs=a,b region_size=64k log=disk:log nosync=true", "uuid-a", "uuid-b"));
        t.close();
        int before = a.writes.get() + b.writes.get() + log.writes.get();
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> new MirrorFactory().create(
                new IdContext("legs=a,b region_size=64k log=disk:log", "uuid-a", "uuid-c")));
        assertEquals("mirror: log device 'log' belongs to other legs (their device identities differ); give the legs it was made with,"
                + " in the same order, or wipe the log device", e.getMessage());
        assertEquals(before, a.writes.get() + b.writes.get() + log.writes.get());
        new MirrorFactory().create(new IdContext("legs=a,b region_size=64k log=disk:log", "uuid-a", "uuid-b")).close();
    }

    /** A context whose legs a and b have device identities. */
    final class IdContext implements dev.strata.api.TargetContext {
        final SimpleTargetContext inner;
        final String idA;
        final String idB;

        IdContext(String args, String idA, String idB) {
            this.inner = SimpleTargetContext.of("m0", args).with("a", a).with("b", b).with("log", log);
            this.idA = idA;
            this.idB = idB;
        }

        @Override
        public String deviceName() {
            return inner.deviceName();
        }

        @Override
        public Map<String, String> arguments() {
            return inner.arguments();
        }

        @Override
        public dev.strata.api.BlockDevice lowerDevice(String name) {
            return inner.lowerDevice(name);
        }

        @Override
        public String lowerDeviceId(String name) {
            return name.equals("a") ? idA : name.equals("b") ? idB : "uuid-log";
        }
    }

    @Test
    void aDeviceThatIsNotALogIsRefused() throws IOException {
        log.write(0, ByteBuffer.wrap(new byte[4096]).put(0, (byte) 9), 0);
        int before = log.writes.get();
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> new MirrorFactory().create(
                SimpleTargetContext.of("m0", "legs=a,b region_size=64k log=disk:log").with("a", a).with("b", b).with("log", log)));
        assertEquals("mirror: log device 'log' is not a mirror log (no mirror log magic); give a blank device or wipe it", e.getMessage());
        assertEquals(before, log.writes.get());
    }

    @Test
    void everyLegAndTheLogAreClaimedExclusively() {
        assertEquals(Map.of("a", Claim.EXCLUSIVE, "b", Claim.EXCLUSIVE, "log", Claim.EXCLUSIVE),
                new MirrorFactory().claims(Map.of("legs", "a,b", "region_size", "64k", "log", "disk:log")));
        assertEquals(List.of("a", "b"), new MirrorFactory().lowerDevices(Map.of("legs", "a,b", "region_size", "64k", "log", "core")));
    }
}
