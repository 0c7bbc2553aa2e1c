package dev.strata.daemons.internal.modulator;

import dev.strata.api.WritebackController;
import java.util.Map;
import org.osgi.service.component.annotations.Component;

/**
 * {@code strata.controller=modulator}: dm-writeboost's migration modulator, a gate that lets
 * writeback run at full speed while the backing device was busy less than
 * {@code writeback_threshold} percent of the last second and stops it otherwise. Each cache gets
 * its own {@link ModulatorSession}.
 */
@Component(service = WritebackController.class, property = {WritebackController.NAME + "=" + ModulatorTunables.NAME,
        "service.description=dm-writeboost modulator: writes back while the backing device is less busy than writeback_threshold"})
public final class ModulatorController implements WritebackController {

    @Override
    public Session open(String cache, Map<String, String> tunables) {
        return new ModulatorSession(cache, tunables);
    }
}
