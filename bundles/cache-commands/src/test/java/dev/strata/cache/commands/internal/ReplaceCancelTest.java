package dev.strata.cache.commands.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import org.apache.felix.service.command.CommandSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;

import dev.strata.core.internal.DeviceDefinition;

/**
 * {@code cache:replace} cancelled at every phase — from another console, by Ctrl-C, at each store
 * point, after the copy, in the pause (too late) — leaves the cache as it was, with nothing
 * stored and the partial copy blank; {@code cache:stats} answers during the copy.
 */
class ReplaceCancelTest extends ReplaceFixture {

    /** {@code cache:replace --cancel} from another console while the copy is held: nothing changed. */
    @Test
    void cancelDuringTheCopyFromAnotherConsole() throws Exception {
        attach("writeboost");
        writeDirty(7);
        Map<String, DeviceDefinition> stored = s.store.snapshot();
        long slowWrites = writes("slow");
        GatedDevice copy = s.gates.get("ssd2");
        copy.closeAfter(2); // the blank first block and the metadata chunk: held in the first pass (it copies only the used segments)
        ByteArrayOutputStream first = new ByteArrayOutputStream();
        CommandSession console1 = s.console(first);
        Future<Object> replace = pool.submit(() -> console1.execute("cache:replace slow cache=ssd2"));
        DetachCommandTest.await("the copy held", () -> copy.waiting() > 0);
        String answer = other("cache:replace --cancel slow");
        awaitInterruptTaken("slow"); // else the copy can go on and reach the pause before the cancel does
        copy.open();
        assertEquals("slow: cancelling the replace (its console prints how far it got)", answer);
        assertInstanceOf(InterruptedException.class, failure(replace));
        String report = first.toString(StandardCharsets.UTF_8);
        assertTrue(report.matches("(?s).*slow: replace cancelled after copying [0-9.]+ [KMG]?i?B; the cache stays on ssd "
                + "\\(ssd2 is left blank\\)\\s*"), report);
        console1.close();
        checkCancelled(stored, slowWrites);
    }

    /** Ctrl-C (Gogo interrupts the job) during the copy: as --cancel. */
    @Test
    void ctrlCDuringTheCopy() throws Exception {
        attach("writeboost");
        writeDirty(7);
        Map<String, DeviceDefinition> stored = s.store.snapshot();
        long slowWrites = writes("slow");
        GatedDevice copy = s.gates.get("ssd2");
        copy.closeAfter(2); // the blank first block and the metadata chunk: held in the first pass (it copies only the used segments)
        ByteArrayOutputStream first = new ByteArrayOutputStream();
        CommandSession console1 = s.console(first);
        Future<Object> replace = pool.submit(() -> console1.execute("cache:replace slow cache=ssd2"));
        DetachCommandTest.await("the copy held", () -> copy.waiting() > 0 && console1.foregroundJob() != null);
        console1.foregroundJob().interrupt();
        assertInstanceOf(InterruptedException.class, failure(replace));
        // only once the cancel has reached the manager's replace may the copy go on: opened before,
        // the copy can finish and the pause begin first, and the replace rightly completes
        awaitInterruptTaken("slow");
        copy.open();
        DetachCommandTest.await("the report", () -> first.toString(StandardCharsets.UTF_8).contains("the cache stays on ssd"));
        String report = first.toString(StandardCharsets.UTF_8);
        assertTrue(report.matches("(?s).*slow: replace cancelled after copying [0-9.]+ [KMG]?i?B; the cache stays on ssd "
                + "\\(ssd2 is left blank\\)\\s*"), report);
        console1.close();
        checkCancelled(stored, slowWrites);
    }

    /**
     * Ctrl-C at each phase of the replace, at the store's points: 0 and 1 (around the journal: before
     * the copy) are cancels — nothing changed; 2 (in the pause, before the commit), 3 (after it), 4
     * and 5 (around the journal's deletion, the old device blanked) are too late — the replace
     * completes. Either way the console says what happened: Gogo drops the result of a job it
     * interrupted, so a replace that completed after Ctrl-C used to end without a word (the cache had
     * moved, the user was not told).
     */
    @ParameterizedTest(name = "store point {0}")
    @org.junit.jupiter.params.provider.ValueSource(ints = {0, 1, 2, 3, 4, 5})
    void ctrlCAtEachPhaseIsAnswered(int point) throws Exception {
        attach("writeboost");
        writeDirty(7);
        Map<String, DeviceDefinition> stored = s.store.snapshot();
        long slowWrites = writes("slow");
        ByteArrayOutputStream first = new ByteArrayOutputStream();
        CommandSession console1 = s.console(first);
        AtomicReference<Future<Object>> replace = new AtomicReference<>();
        AtomicReference<Throwable> hookFailed = new AtomicReference<>();
        s.store.armCrash(point, () -> { // no power cut: only the moment, on the replace's own thread
            try {
                DetachCommandTest.await("the job", () -> replace.get() != null && console1.foregroundJob() != null);
                console1.foregroundJob().interrupt();
                DetachCommandTest.await("the job's end", () -> replace.get().isDone());
                awaitInterruptTaken("slow");
            } catch (Throwable t) {
                hookFailed.set(t);
            }
        });
        replace.set(pool.submit(() -> console1.execute("cache:replace slow cache=ssd2")));
        assertInstanceOf(InterruptedException.class, failure(replace.get()));
        boolean tooLate = point >= 2;
        String expected = tooLate ? "slow: too late to cancel (the pause had begun): cache moved from ssd to ssd2 ("
                : "; the cache stays on ssd (ssd2 is left blank)";
        DetachCommandTest.await("the report", () -> first.toString(StandardCharsets.UTF_8).contains(expected));
        assertEquals(null, hookFailed.get());
        awaitReplaceThreadGone("slow");
        String report = first.toString(StandardCharsets.UTF_8);
        console1.close();
        if (tooLate) {
            assertTrue(report.matches("(?s).*slow: too late to cancel \\(the pause had begun\\): cache moved from ssd to ssd2 "
                    + "\\([0-9.]+ [KMG]iB copied in \\d+ pass(es)?, [0-9.]+ s, nothing written back; ssd is blank now\\)"
                    + "; I/O paused [0-9.]+ (µs|ms)\\s*"), report);
            checkOn("ssd2");
            assertTrue(blank("ssd"), "the old cache device is blank");
            assertEquals(slowWrites, writes("slow"));
            checkDirty(7);
        } else {
            assertTrue(report.matches("(?s).*slow: replace cancelled after copying 0 B; the cache stays on ssd "
                    + "\\(ssd2 is left blank\\)\\s*"), report);
            checkCancelled(stored, slowWrites);
        }
    }

    /**
     * Waits until the interrupt of a {@code cache:replace} command (Ctrl-C, {@code --cancel}; already
     * sent) has been handed on and taken by the manager's replace, as a cancel or as too late: the
     * command's thread has passed it on to the thread it runs the replace on (parked again, the
     * interrupt consumed), and that thread has handled it (parked again in the replace, consumed: the
     * manager takes an interrupt there as a cancel). Neither can be parked with its interrupt
     * consumed before it handled it.
     */
    static void awaitInterruptTaken(String device) {
        DetachCommandTest.await("the command's thread to pass the interrupt on",
                () -> parkedAndHandled(t -> Stream.of(t.getStackTrace())
                        .anyMatch(f -> f.getMethodName().equals("replaceAndShow")
                                && f.getClassName().equals(ReplaceCommand.class.getName()))));
        DetachCommandTest.await("the replace to take the interrupt",
                () -> parkedAndHandled(t -> t.getName().equals("cache-replace-" + device)));
    }

    private static boolean parkedAndHandled(java.util.function.Predicate<Thread> which) {
        List<Thread> found = Thread.getAllStackTraces().keySet().stream().filter(which).toList();
        if (found.size() != 1) {
            return false;
        }
        Thread t = found.get(0);
        Thread.State st = t.getState();
        return (st == Thread.State.WAITING || st == Thread.State.TIMED_WAITING) && !t.isInterrupted();
    }

    /** The thread a {@code cache:replace} ran the manager's replace on has ended (its outcome is final). */
    private static void awaitReplaceThreadGone(String device) {
        DetachCommandTest.await("the replace's thread to end", () -> Thread.getAllStackTraces().keySet().stream()
                .noneMatch(t -> t.getName().equals("cache-replace-" + device)));
    }

    /** A cancel after the copy, just before the pause (the last moment a cancel is taken): nothing changed. */
    @Test
    void cancelAfterTheCopyBeforeThePause() throws Exception {
        attach("writeboost");
        writeDirty(7);
        Map<String, DeviceDefinition> stored = s.store.snapshot();
        long slowWrites = writes("slow");
        Thread caller = Thread.currentThread();
        Exception e = null;
        try {
            s.manager.replace("slow", "ssd2", (copied, left, pass) -> {
                if (pass >= 1 && left == 0) {
                    caller.interrupt(); // the copy is done: the caller's interrupt is a cancel still
                    DetachCommandTest.await("the cancel taken", () -> !caller.isInterrupted());
                }
            });
        } catch (Exception x) {
            e = x;
        }
        assertInstanceOf(InterruptedException.class, e, String.valueOf(e));
        assertFalse(Thread.interrupted());
        checkCancelled(stored, slowWrites);
    }

    /**
     * {@code cache:stats} answers while the copy runs (held here), from the running cache, instead
     * of waiting for the replace (which holds the device's operation lock for its whole length).
     */
    @Test
    void statsAnswersDuringTheCopy() throws Exception {
        attach("writeboost");
        writeDirty(7);
        GatedDevice copy = s.gates.get("ssd2");
        copy.closeAfter(2);
        Future<String> r = pool.submit(() -> s.run("cache:replace slow cache=ssd2"));
        DetachCommandTest.await("the copy held", () -> copy.waiting() > 0);
        String stats;
        try {
            stats = other("cache:stats slow");
        } finally {
            copy.open();
        }
        assertTrue(stats.matches("slow: writeback, .* dirty.*"), stats);
        assertTrue(r.get(60, TimeUnit.SECONDS).startsWith("slow: cache moved from ssd to ssd2"));
    }

    /** In the pause (at the commit) a cancel is refused and the replace completes. */
    @Test
    void cancelInThePauseIsTooLate() throws Exception {
        attach("writeboost");
        writeDirty(7);
        AtomicReference<String> answer = new AtomicReference<>();
        s.store.armCrash(2, () -> answer.set(other2("cache:replace --cancel slow"))); // no power cut: just the moment
        String r = s.run("cache:replace slow cache=ssd2");
        assertEquals("slow: too late to cancel: the replace is switching to the new cache device (one short pause)",
                answer.get());
        assertTrue(r.startsWith("slow: cache moved from ssd to ssd2"), r);
        checkOn("ssd2");
        checkDirty(7);
    }

    private void checkCancelled(Map<String, DeviceDefinition> stored, long slowWrites) throws Exception {
        checkOn("ssd");
        assertEquals(stored, s.store.snapshot(), "nothing stored changed");
        assertTrue(blank("ssd2"), "the partial copy is blank");
        assertFalse(blank("ssd"));
        assertTrue(dirty() >= DIRTY, "the cache as it was: " + dirty());
        assertEquals(slowWrites, writes("slow"));
        checkDirty(7);
        // and it can be run again
        assertTrue(s.run("cache:replace slow cache=ssd2").startsWith("slow: cache moved from ssd to ssd2"));
        checkDirty(7);
    }

}
