package dev.strata.itests;

import static org.junit.Assert.fail;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Waits for a condition with a deadline (the machine is shared and noisy: deadlines are generous
 * and a pass never depends on timing). The condition is re-checked every 20 ms until it holds.
 */
final class Await {

    private Await() {
    }

    static void until(String what, long seconds, BooleanSupplier condition) {
        until(what, seconds, condition, () -> "");
    }

    static void until(String what, long seconds, BooleanSupplier condition, Supplier<String> diagnostics) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("not within " + seconds + " s: " + what + " " + diagnostics.get());
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
    }
}
