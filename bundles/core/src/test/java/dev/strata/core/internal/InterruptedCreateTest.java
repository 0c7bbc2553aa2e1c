package dev.strata.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.strata.api.Target;
import dev.strata.api.TargetContext;
import dev.strata.api.TargetFactory;

/**
 * Ctrl-C during a {@code dev:create} whose build takes long (a writecache formatting a 200 GiB
 * cache device) must cancel it. It did not: the build ran to its end, the device was created and
 * stored, and the console said "interrupted" — a user who pressed Ctrl-C and read that found the
 * device there after the next start.
 */
class InterruptedCreateTest extends ManagerFixture {

    /** tfile whose build is interrupted while it runs, as Ctrl-C lands during a long format. */
    private final TestTargets.FileFactory files = new TestTargets.FileFactory();

    private final TargetFactory interruptedDuringBuild = new TargetFactory() {
        @Override
        public String usage() {
            return files.usage();
        }

        @Override
        public List<String> lowerDevices(Map<String, String> arguments) {
            return files.lowerDevices(arguments);
        }

        @Override
        public Target create(TargetContext context) throws IOException {
            Target t = files.create(context);
            Thread.currentThread().interrupt(); // the build itself does not look at it
            return t;
        }
    };

    @Test
    void aCreateInterruptedDuringItsBuildCreatesNothingAndClosesTheTarget() throws Exception {
        m.addFactory(TestTargets.entry(interruptedDuringBuild, "tslow"));
        Map<String, String> a = args("path", dir.resolve("x.img").toString(), "size", "1M");
        Map<String, DeviceDefinition> stored = store.snapshot();
        InterruptedIOException e = assertThrows(InterruptedIOException.class, () -> m.create("x", "tslow", a));
        assertTrue(Thread.interrupted(), "the interrupt stays set for the caller");
        assertEquals(-1, e.getMessage().indexOf('\n'));
        assertTrue(e.getMessage().contains("'x'") && e.getMessage().contains("not created"), e.getMessage());
        assertFalse(m.info("x").isPresent(), "no device");
        assertEquals(stored, store.snapshot(), "nothing stored");
        assertEquals(1, files.closed.get(), "the built target was closed");
        // the name and the file are free again
        m.create("x", "tfile", a);
        assertTrue(m.info("x").isPresent());
    }

    /** A build that looks at the interrupt itself (a writecache format) and stops. */
    private final TargetFactory stopsOnInterrupt = new TargetFactory() {
        @Override
        public String usage() {
            return files.usage();
        }

        @Override
        public List<String> lowerDevices(Map<String, String> arguments) {
            return files.lowerDevices(arguments);
        }

        @Override
        public Target create(TargetContext context) throws IOException {
            Thread.currentThread().interrupt(); // Ctrl-C during the format
            throw new InterruptedIOException("format interrupted after 1.0 MiB of 4.0 MiB of metadata; the cache "
                    + "device is left unformatted");
        }
    };

    /**
     * The same when the build stops at the interrupt itself: one line saying that the device was
     * not created and what the build left behind; nothing stored, the interrupt kept. It said only
     * the target's own words ("format interrupted after …"), not that nothing was created.
     */
    @Test
    void aBuildThatStopsAtTheInterruptCreatesNothingAndSaysSo() throws Exception {
        m.addFactory(TestTargets.entry(stopsOnInterrupt, "tformat"));
        Map<String, String> a = args("path", dir.resolve("y.img").toString(), "size", "1M");
        Map<String, DeviceDefinition> stored = store.snapshot();
        InterruptedIOException e = assertThrows(InterruptedIOException.class, () -> m.create("y", "tformat", a));
        assertTrue(Thread.interrupted(), "the interrupt stays set for the caller");
        assertEquals("device 'y' was not created: interrupted (format interrupted after 1.0 MiB of 4.0 MiB of "
                + "metadata; the cache device is left unformatted)", e.getMessage());
        assertFalse(m.info("y").isPresent(), "no device");
        assertEquals(stored, store.snapshot(), "nothing stored");
        m.create("y", "tfile", a); // the name is free again
        assertTrue(m.info("y").isPresent());
    }
}
