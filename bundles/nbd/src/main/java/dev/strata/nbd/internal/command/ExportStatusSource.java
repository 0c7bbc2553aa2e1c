package dev.strata.nbd.internal.command;

import dev.strata.api.StatusSource;
import java.util.LinkedHashMap;
import java.util.Map;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The exports' counters (the rows of {@code nbd:exports}) for monitors: core publishes each as
 * the MBean {@code dev.strata:type=Export,name=NAME}.
 */
@Component(service = StatusSource.class, property = StatusSource.KIND + "=Export")
public final class ExportStatusSource implements StatusSource {
    @Reference
    NbdComponent nbd;

    @Override
    public Map<String, Map<String, String>> statuses() {
        Map<String, Map<String, String>> out = new LinkedHashMap<>();
        for (Map<String, String> row : nbd.exports().status()) {
            out.put(row.get("name"), row);
        }
        return out;
    }
}
