package dev.strata.testsupport.crash;

import dev.strata.api.BlockDevice;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CrashReplayTest {

    @Test
    void passThroughReplaysEveryPointWithoutMismatch() {
        CrashTestSubject ok = TestSubjects.over("pass-through", TestSubjects.PassThrough::new, false);
        CrashStats stats = CrashReplay.run(ok, CrashReplay.Options.DEFAULT);
        assertEquals(0, stats.mismatches());
        assertTrue(stats.crashPoints() > 20, "points: " + stats.crashPoints());
        assertEquals(stats.crashPoints() * 3, stats.crashes());
    }

    @Test
    void writeThroughKeepsTheLogPropertyAtEveryPoint() {
        CrashTestSubject ok = TestSubjects.over("write-through", TestSubjects.WriteThrough::new, true);
        assertEquals(0, CrashReplay.run(ok, CrashReplay.Options.DEFAULT).mismatches());
    }

    @Test
    void lyingFlushIsCaughtByReplay() {
        CrashTestSubject broken = TestSubjects.over("lying-flush", TestSubjects.LyingFlush::new, false);
        CrashCheckFailure f = assertThrows(CrashCheckFailure.class, () -> CrashReplay.run(broken, CrashReplay.Options.DEFAULT));
        assertTrue(f.getMessage().contains("image drop_all"), f.getMessage());
    }

    @Test
    void droppedFuaIsCaughtByReplay() {
        CrashTestSubject broken = TestSubjects.over("dropped-fua", TestSubjects.DroppedFua::new, false);
        assertThrows(CrashCheckFailure.class, () -> CrashReplay.run(broken, CrashReplay.Options.DEFAULT));
    }

    @Test
    void replayHonoursWhatEachFlushCovered() throws Exception {
        WriteLog log = new WriteLog();
        CrashableDevice disk = new CrashableDevice("d", 4096, 512);
        LogWritesDevice dev = new LogWritesDevice(disk, log, 0);
        dev.write(0, Patterns.buffer(Patterns.tokens(1, 0, 1)), 0);
        dev.flush();
        dev.write(512, Patterns.buffer(Patterns.tokens(2, 1, 1)), 0);
        dev.write(1024, Patterns.buffer(Patterns.tokens(3, 2, 1)), BlockDevice.FUA);
        dev.writeZeroes(0, 512, 0);
        List<LogEntry> entries = log.entries();
        assertEquals(5, entries.size());
        assertEquals(List.of(2, 4, 5), LogReplay.durabilityPoints(entries));

        LogReplay replay = new LogReplay(entries, List.of(new byte[4096]), List.of(512));
        replay.advanceTo(2);
        assertArrayEquals(new long[] {SectorPattern.token(1, 0), 0, 0}, decode(replay.images(CrashMode.DROP_ALL, new Random(1)).get(0)));
        replay.advanceTo(4);
        assertArrayEquals(new long[] {SectorPattern.token(1, 0), 0, SectorPattern.token(3, 2)},
                decode(replay.images(CrashMode.DROP_ALL, new Random(1)).get(0)));
        assertArrayEquals(new long[] {SectorPattern.token(1, 0), SectorPattern.token(2, 1), SectorPattern.token(3, 2)},
                decode(replay.images(CrashMode.KEEP_ALL, new Random(1)).get(0)));
        replay.advanceTo(5);
        assertArrayEquals(new long[] {0, SectorPattern.token(2, 1), SectorPattern.token(3, 2)},
                decode(replay.images(CrashMode.KEEP_ALL, new Random(1)).get(0)));
    }

    @Test
    void logFormatRoundTrips() throws Exception {
        CrashableDevice logDev = new CrashableDevice("log", 64 * 1024, 512);
        logDev.write(0, LogFormat.superblock(8192, 4096, 77), 0);
        byte[] data = new byte[1024];
        new Random(3).nextBytes(data);
        List<LogEntry> in = List.of(
                new LogEntry(10, 0, LogEntry.Kind.WRITE, true, 4096, 1024, 0, data),
                new LogEntry(11, 0, LogEntry.Kind.ZERO, false, 0, 512, 0, null),
                new LogEntry(12, 0, LogEntry.Kind.DISCARD, false, 512, 512, 0, null),
                new LogEntry(13, 0, LogEntry.Kind.FLUSH, false, 0, 0, 12, null));
        long pos = 512;
        for (int i = 0; i < in.size(); i++) {
            logDev.write(pos, LogFormat.header(77, i, in.get(i)), 0);
            pos += 512;
            if (in.get(i).data() != null) {
                logDev.write(pos, ByteBuffer.wrap(in.get(i).data()), 0);
                pos += in.get(i).data().length;
            }
        }
        // a stale entry from an older log id after the end must be ignored
        logDev.write(pos, LogFormat.header(76, in.size(), in.get(1)), 0);
        LogFormat.Recording r = LogFormat.read(logDev, 0);
        assertEquals(8192, r.deviceSize());
        assertEquals(4096, r.blockSize());
        assertEquals(in.size(), r.entries().size());
        for (int i = 0; i < in.size(); i++) {
            LogEntry a = in.get(i);
            LogEntry b = r.entries().get(i);
            assertEquals(a.toString(), b.toString());
            assertEquals(a.covers(), b.covers());
            if (a.data() != null) {
                assertArrayEquals(a.data(), b.data());
            }
        }
        // a flipped data byte ends the log at that entry
        logDev.write(1024, ByteBuffer.wrap(new byte[512]), 0);
        assertEquals(0, LogFormat.read(logDev, 0).entries().size());
    }

    private static long[] decode(byte[] image) {
        ByteBuffer b = ByteBuffer.wrap(image);
        long[] out = new long[3];
        for (int i = 0; i < 3; i++) {
            out[i] = SectorPattern.decode(b);
        }
        return out;
    }
}
