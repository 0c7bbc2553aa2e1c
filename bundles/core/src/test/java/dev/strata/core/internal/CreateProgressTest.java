package dev.strata.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;

import dev.strata.api.Target;
import dev.strata.api.TargetContext;
import dev.strata.api.TargetFactory;

/**
 * A build's progress ({@link TargetContext#progress}: a writecache formatting, a file being
 * preallocated) reaches the caller of the create that asked for it, and only that build: a later
 * reload or restart of the same device reports to nobody.
 */
class CreateProgressTest extends ManagerFixture {
    private final TestTargets.FileFactory files = new TestTargets.FileFactory();
    private final TargetFactory reporting = new TargetFactory() {
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
            context.progress("formatting", 1, 2);
            context.progress("formatting", 2, 2);
            return files.create(context);
        }
    };

    @Test
    void theBuildOfACreateReportsToItsCallerOnly() throws Exception {
        m.addFactory(TestTargets.entry(reporting, "tformat"));
        List<String> seen = new CopyOnWriteArrayList<>();
        Map<String, String> a = args("path", dir.resolve("p.img").toString(), "size", "1M");
        m.create("p", "tformat", a, (what, done, total) -> seen.add(what + " " + done + "/" + total));
        assertEquals(List.of("formatting 1/2", "formatting 2/2"), seen);
        m.reload("p", "tformat", a, false);
        assertEquals(2, seen.size(), "a reload's build reports to nobody");
    }
}
