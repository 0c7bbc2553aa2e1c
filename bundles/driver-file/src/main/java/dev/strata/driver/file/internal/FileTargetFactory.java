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
        return "file path=FILE [size=SIZE] [create=false]  — a regular file through the page cache;"
                + " create=true creates it (sparse) or grows it to size=";
    }

    @Override
    public List<String> lowerDevices(Map<String, String> arguments) {
        FileSpec.parse(FileTarget.TYPE, arguments);
        return List.of();
    }

    @Override
    public Target create(TargetContext context) throws IOException {
        return FileTarget.open(FileSpec.parse(FileTarget.TYPE, context.arguments()), context.deviceName());
    }
}
