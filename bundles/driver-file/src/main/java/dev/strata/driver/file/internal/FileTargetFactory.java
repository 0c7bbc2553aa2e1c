package dev.strata.driver.file.internal;

import dev.strata.api.Target;
import dev.strata.api.TargetContext;
import dev.strata.api.TargetFactory;
import dev.strata.driver.support.internal.FileSpec;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import org.osgi.service.component.annotations.Component;

/** Builds {@code file} targets: {@code file path=… [size=…] [create=true]}. */
@Component(service = TargetFactory.class, property = TargetFactory.TYPE + "=" + FileTarget.TYPE)
public class FileTargetFactory implements TargetFactory {

    @Override
    public String usage() {
        return "file path=FILE [size=SIZE] [create=false] [preallocate=false]  — a regular file through the page cache;"
                + " create=true creates it (sparse) or grows it to size=; preallocate=true writes zeros over what"
                + " that creates or grows (no holes)";
    }

    @Override
    public List<String> lowerDevices(Map<String, String> arguments) {
        FileSpec.parse(FileTarget.TYPE, arguments);
        return List.of();
    }

    @Override
    public Target create(TargetContext context) throws IOException {
        FileSpec spec = FileSpec.parse(FileTarget.TYPE, context.arguments());
        return FileTarget.open(spec, context.deviceName(),
                (done, total) -> context.progress("preallocating " + spec.path.getFileName(), done, total));
    }
}
