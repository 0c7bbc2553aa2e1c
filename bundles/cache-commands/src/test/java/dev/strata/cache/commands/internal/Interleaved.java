package dev.strata.cache.commands.internal;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;

import dev.strata.api.CacheMode;
import dev.strata.api.CacheTarget;
import dev.strata.api.DeviceHandle;
import dev.strata.api.DeviceManager;
import dev.strata.testsupport.load.VerifiedIo;

/**
 * A real object (the device manager, a cache target) with an interleaving made exact: every call
 * is forwarded to it, and around the first call of one method (the swap of a switch, the reload of
 * a detach, a mode switch) steps run that other clients would run at that moment under load:
 * before it, and after it when it threw. Not a fake: the real object does all the work; only the
 * moment is chosen.
 */
final class Interleaved<T> {
    /** A step that may throw. */
    interface Step {
        void run() throws Exception;
    }

    /** How often the method was called. */
    final AtomicInteger calls = new AtomicInteger();
    /** The real object behind the interleaving. */
    final T object;

    Interleaved(Class<T> type, T real, String method, Step before, Step afterRefusal) {
        object = type.cast(Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {type},
                (proxy, m, args) -> {
                    boolean first = m.getName().equals(method) && calls.getAndIncrement() == 0;
                    if (first) {
                        before.run();
                    }
                    try {
                        return m.invoke(real, args);
                    } catch (InvocationTargetException e) {
                        if (first) {
                            afterRefusal.run();
                        }
                        throw e.getCause();
                    }
                }));
    }

    /** The device manager, interleaved. */
    static Interleaved<DeviceManager> manager(DeviceManager real, String method, Step before, Step afterRefusal) {
        return new Interleaved<>(DeviceManager.class, real, method, before, afterRefusal);
    }

    /**
     * A write that read the cache's mode before write-around was set and lands after the drain:
     * in the cache, dirty. Made by the mode the write saw, set back at once (refused while the block
     * is dirty, as the drain's own first switch is: writes go around again).
     */
    static void lateWrite(LiveStack s, String device, long block, long stamp) throws Exception {
        s.manager.withTarget(device, CacheTarget.class, t -> {
            CacheMode was = t.mode();
            t.setMode(CacheMode.WRITEBACK);
            write(s, device, block, stamp);
            try {
                t.setMode(was);
            } catch (IllegalArgumentException refused) {
                // the mode waits for the writeback; new writes go around meanwhile
            }
            return null;
        });
    }

    /** One block stamped {@code stamp} through a handle, as a client writes it. */
    static void write(LiveStack s, String device, long block, long stamp) throws IOException {
        try (DeviceHandle h = s.manager.open(device, "test")) {
            ByteBuffer b = ByteBuffer.allocate(VerifiedIo.BLOCK);
            VerifiedIo.fill(b, block, stamp);
            h.write(block * VerifiedIo.BLOCK, b, 0);
        }
    }
}
