package dev.strata.cache.writeboost.internal.crash;

import dev.strata.testsupport.crash.CrashMode;
import dev.strata.testsupport.crash.CrashModelRunner;
import dev.strata.testsupport.crash.CrashOp;
import dev.strata.testsupport.crash.CrashOp.Background;
import dev.strata.testsupport.crash.CrashOp.Crash;
import dev.strata.testsupport.crash.CrashOp.Discard;
import dev.strata.testsupport.crash.CrashOp.Flush;
import dev.strata.testsupport.crash.CrashOp.PowerCut;
import dev.strata.testsupport.crash.CrashOp.Read;
import dev.strata.testsupport.crash.CrashOp.Restart;
import dev.strata.testsupport.crash.CrashOp.Write;
import dev.strata.testsupport.crash.CrashOp.Zero;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A sequence the bypass crash model found (jqwik seed -8730131293775382053): unit 13 is written
 * back (its copy becomes clean), discarded (the backing device zeroes it), a crash makes the clean
 * copy's value the durable one, and a bypassed write over unit 13 drops the copy and is torn by a
 * power cut — the untouched sectors then read the discarded zeroes, a value no write put there.
 * Discard now drops cached copies like a bypassed write does. Failed on every run before.
 */
class DiscardCleanCopyCrashTest {
    @Test
    void aDiscardedBlockDoesNotComeBackAfterItsCleanCopyIsDropped() {
        List<CrashOp> ops = List.of(new Write(13, 1, false), new Write(0, 2, true),
                new PowerCut(new Write(1, 4, true), 2, CrashMode.DROP_ALL, 0), new Read(2, 1), new Flush(),
                new Zero(47, 3, false), new Write(1, 4, false), new Flush(), new Flush(), new Write(27, 3, false),
                new Write(62, 2, false), new Write(0, 3, false), new Read(1, 3), new Crash(CrashMode.TORN, 998),
                new Write(63, 1, true), new Write(20, 2, false), new Zero(3, 4, false), new Write(63, 1, false),
                new Write(63, 1, true), new Write(16, 4, false), new Write(11, 2, true), new Flush(),
                new Write(1, 2, false), new Read(0, 4), new Background(), new Read(56, 1), new Background(),
                new Write(8, 4, false), new Crash(CrashMode.SUBSET, 33), new Write(35, 2, false),
                new Write(6, 1, false), new Write(2, 1, false), new Discard(2, 1), new Discard(12, 4),
                new Write(1, 3, false), new Write(1, 4, false), new Background(), new Write(31, 4, true),
                new Write(2, 3, false), new Write(1, 3, true), new Restart(), new Flush(),
                new PowerCut(new Write(0, 3, false), 5, CrashMode.TORN, 976), new Write(4, 3, false),
                new Crash(CrashMode.DROP_ALL, 25), new Flush(),
                new PowerCut(new Write(11, 3, false), 8, CrashMode.TORN, 883), new Zero(11, 1, false));
        for (WriteboostSubject s : List.of(WriteboostSubject.bypassing(), WriteboostSubject.readCachingBypassing())) {
            CrashModelRunner.run(s, ops);
        }
    }
}
