package dev.strata.cache.commands.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import org.junit.jupiter.params.provider.Arguments;

import dev.strata.api.DeviceHandle;
import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceState;
import dev.strata.core.internal.DeviceDefinition;
import dev.strata.testsupport.load.VerifiedIo;

/**
 * The power-cut loop of the live-change tests, once: four threads write, flush and check
 * checksummed blocks through a handle on the device while an operation runs; at one chosen moment
 * of it (a store write, a phase hook) every disk loses what it had not made durable; the stack
 * restarts from the definitions stored at that moment, and every block must hold its last durable
 * value or one written since (the disk rule), with no staged mark left.
 */
final class PowerCuts {
    /** A step that may throw. */
    interface Step {
        void run() throws Exception;
    }

    /** What the cut left: the clients' record, whether the operation failed (on the dead disks). */
    record Cut(VerifiedIo io, Exception failure, DeviceHandle handle) {
    }

    private PowerCuts() {
    }

    /** {@code arm} gets the cut to run at its moment; {@code setup} runs under I/O before it is armed. */
    static Cut run(LiveStack s, ExecutorService pool, String device, long seed, Step setup, Consumer<Runnable> arm,
            Step operation) throws Exception {
        DeviceHandle h = s.manager.open(device, "nbd:t");
        VerifiedIo io = new VerifiedIo(List.of(h), 4, 64).start(pool);
        io.awaitOps(300);
        setup.run();
        io.awaitOps(500);
        AtomicReference<Map<String, DeviceDefinition>> survived = new AtomicReference<>();
        arm.accept(() -> {
            io.crashing();
            survived.set(s.store.snapshot());
            s.powerCut(seed);
        });
        Exception failure = null;
        try {
            operation.run();
        } catch (Exception e) {
            failure = e;
        }
        if (survived.get() == null) {
            fail("the crash point was never reached" + (failure == null ? "" : ": " + failure));
        }
        // restarted first: requests of the clients that wait at a gate the dead stack left closed end now
        s.restart(survived.get());
        io.stop();
        assertEquals(0, io.errors.get(), "no error before the power cut: " + io.summary());
        assertEquals(0, io.mismatches.get(), io.summary());
        return new Cut(io, failure, h);
    }

    /** After {@link #run}: the device is up and the disk rule holds for every block. */
    static DeviceInfo checkDiskRule(LiveStack s, String device, Cut cut, String where) throws Exception {
        DeviceInfo d = s.manager.info(device).orElseThrow();
        assertEquals(DeviceState.ACTIVE, d.state(), where + ": " + d);
        assertTrue(s.store.snapshot().values().stream().allMatch(x -> x.stagedFor() == null), "no staged mark left");
        try (DeviceHandle again = s.manager.open(device, "nbd:t")) {
            List<String> bad = cut.io().verifyAfterCrash(again);
            assertTrue(bad.isEmpty(), "disk rule after a power cut " + where + ": " + bad);
        }
        return d;
    }

    /** Points {@code 0..points-1}, each with 3 seeds, 30 with {@code -Dstrata.soak=true}. */
    static Stream<Arguments> points(int points) {
        int seeds = Boolean.getBoolean("strata.soak") ? 30 : 3;
        return IntStream.range(0, points).boxed()
                .flatMap(p -> IntStream.rangeClosed(1, seeds).mapToObj(seed -> Arguments.of(p, seed)));
    }
}
