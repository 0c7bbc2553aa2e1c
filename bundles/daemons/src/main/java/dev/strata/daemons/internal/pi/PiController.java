package dev.strata.daemons.internal.pi;

import dev.strata.api.WritebackController;
import java.util.Map;
import org.osgi.service.component.annotations.Component;

/**
 * {@code strata.controller=pi}: bcache's writeback rate controller (a PI controller since 2018)
 * holding each cache's dirty share at {@code writeback_percent}. Stateless itself: every cache
 * that binds it opens its own {@link PiSession} with its own integral and token bucket.
 */
@Component(service = WritebackController.class, property = {WritebackController.NAME + "=" + PiTunables.NAME,
        "service.description=bcache PI controller: holds the dirty share at writeback_percent"})
public final class PiController implements WritebackController {

    @Override
    public Session open(String cache, Map<String, String> tunables) {
        return new PiSession(cache, tunables);
    }
}
