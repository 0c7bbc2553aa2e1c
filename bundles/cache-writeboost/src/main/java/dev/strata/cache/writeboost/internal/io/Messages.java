package dev.strata.cache.writeboost.internal.io;

import dev.strata.api.CacheMode;
import dev.strata.api.InvalidArgumentException;
import dev.strata.cache.support.writeback.ControllerBinding;
import java.io.IOException;
import java.util.Locale;

/** {@code dev:message} for a writeboost cache: the actions (writeback=all, invalidate=all) and the tunables. */
final class Messages {
    private final Parts parts;
    private final LogState log;

    Messages(Parts parts) {
        this.parts = parts;
        this.log = parts.log;
    }

    void apply(String key, String value) throws IOException {
        switch (key) {
            case "writeback":
                if (!"all".equals(value)) {
                    throw new InvalidArgumentException("writeboost: writeback=" + value + " is not an action; use writeback=all");
                }
                log.lock.lock();
                try {
                    log.checkFailure();
                    log.forceWriteback = true;
                    log.signal();
                } finally {
                    log.lock.unlock();
                }
                return;
            case "invalidate":
                if (!"all".equals(value)) {
                    throw new InvalidArgumentException("writeboost: invalidate=" + value + " is not an action; use invalidate=all");
                }
                parts.writeback.invalidateAll();
                return;
            default:
                if (ControllerBinding.isSetting(key)) {
                    // writeback.<key>: the bound controller's own tunable, kept and checked by the binding
                    parts.writeback.setControllerSetting(key, value);
                    return;
                }
                if (Tunables.CACHE_MODE.equals(key) && CacheMode.WRITETHROUGH.label().equals(value.trim().toLowerCase(Locale.ROOT))) {
                    // the staging area first: a writethrough write that begins once the mode is
                    // published must find touches recorded from its start on (see Bypass)
                    log.lock.lock();
                    try {
                        log.readCache.activate();
                    } finally {
                        log.lock.unlock();
                    }
                }
                // cache_mode replaces write_around (its older spelling) in the same step, so no
                // write sees the mode in between
                log.tunableCell.update(t -> Tunables.CACHE_MODE.equals(key)
                        ? t.with(key, value).with(Tunables.WRITE_AROUND, "false") : t.with(key, value));
                log.lock.lock();
                try {
                    log.signal();
                } finally {
                    log.lock.unlock();
                }
                parts.injector.activateReadCache();
        }
    }
}
