package dev.strata.driver.direct.internal;

import dev.strata.api.Target;
import dev.strata.api.TargetContext;
import dev.strata.api.TargetFactory;
import dev.strata.driver.support.internal.FileSpec;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Builds {@code direct} targets: {@code direct path=… [size=…] [create=true]}. */
@Component(service = TargetFactory.class, property = TargetFactory.TYPE + "=" + DirectTarget.TYPE)
public class DirectTargetFactory implements TargetFactory {
    private static final Logger LOG = LoggerFactory.getLogger(DirectTargetFactory.class);

    @Activate
    void activate() {
        if (!DirectIo.available()) {
            LOG.warn(DirectIo.UNAVAILABLE);
        }
    }

    @Override
    public String usage() {
        return (DirectIo.available() ? "" : "[unavailable: no com.sun.nio.file] ") + "direct path=FILE [size=SIZE] [create=false] [preallocate=false]  — a regular file with O_DIRECT (no page cache);"
                + " size a multiple of the file system block size; preallocate=true writes zeros over what create=true"
                + " creates or grows (O_DIRECT writes into holes are slower)";
    }

    @Override
    public List<String> lowerDevices(Map<String, String> arguments) {
        FileSpec.parse(DirectTarget.TYPE, arguments);
        return List.of();
    }

    @Override
    public Target create(TargetContext context) throws IOException {
        FileSpec spec = FileSpec.parse(DirectTarget.TYPE, context.arguments());
        return DirectTarget.open(spec, context.deviceName(),
                (done, total) -> context.progress("preallocating " + spec.path.getFileName(), done, total));
    }
}
