package dev.strata.daemons.internal.idle;

import dev.strata.api.WritebackController;
import java.util.Map;
import org.osgi.service.component.annotations.Component;

/**
 * {@code strata.controller=idle}: writeback at full speed once the front end has been idle for
 * {@code idle_ms}, at a floor rate while it is busy. bcache's idle boost (the rate jumps to its
 * maximum when the whole cache set has seen no I/O for a few update rounds) as a controller of
 * its own; dm-writecache's {@code pause_writeback} is the same switch seen from the other side
 * (writeback stops while writes went to the origin recently): {@code busy_kib_per_sec=0}.
 */
@Component(service = WritebackController.class, property = {WritebackController.NAME + "=" + IdleTunables.NAME,
        "service.description=idle boost: full speed after idle_ms without foreground I/O, a floor rate while busy"})
public final class IdleController implements WritebackController {

    @Override
    public Session open(String cache, Map<String, String> tunables) {
        return new IdleSession(cache, tunables);
    }
}
