package dev.strata.shell.internal;

import java.nio.file.Path;

import org.apache.felix.service.command.CommandProcessor;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;

import dev.strata.api.DeviceManager;

/**
 * Runs the {@link Console} on its own thread when the framework property {@code strata.console}
 * is {@code true} (the launcher sets it for {@code bin/strata} without {@code -c}/{@code --daemon});
 * otherwise does nothing, so the bundle's commands ({@code help}, {@code strata:health},
 * {@code log:tail}) are there in every mode.
 */
@Component(service = {}, immediate = true)
public final class ConsoleComponent {

    static final String CONSOLE_PROPERTY = "strata.console";

    @Reference
    CommandProcessor processor;
    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    volatile DeviceManager devices;

    private Console console;
    private Thread thread;

    @Activate
    void activate(BundleContext context) {
        if (!Boolean.parseBoolean(context.getProperty(CONSOLE_PROPERTY))) {
            return;
        }
        String home = context.getProperty("strata.home");
        console = new Console(context, processor, () -> devices, Path.of(home == null ? "." : home));
        thread = new Thread(console, "strata-console");
        thread.start();
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        if (console != null) {
            console.close();
            thread.interrupt();
            thread.join(5000);
        }
    }
}
