package dev.strata.cache.commands.internal;

import dev.strata.api.BlockDevice;
import dev.strata.api.CacheTarget;
import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceManager;
import dev.strata.api.DeviceState;
import dev.strata.api.InvalidArgumentException;
import dev.strata.tools.internal.format.CacheFormat;
import dev.strata.tools.internal.format.Formats;
import java.io.IOException;
import java.util.List;
import org.apache.felix.service.command.Descriptor;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code cache:check DEVICE}: the checks of {@code strata-tool check} (the same code, embedded)
 * on the cache device of a suspended cache. Suspended, because only then does nothing write the
 * metadata while it is read: the target made everything durable in its {@code suspend()}.
 */
@Component(service = CheckCommand.class, property = {"osgi.command.scope=cache", "osgi.command.function=check"})
public final class CheckCommand {
    @Reference
    DeviceManager manager;

    public CheckCommand() {
    }

    /** For tests. */
    CheckCommand(DeviceManager manager) {
        this.manager = manager;
    }

    @Descriptor("check a suspended cache's on-disk metadata (the checks of strata-tool check); "
            + "the first line says 'clean' or how many problems follow, one a line")
    public String check(@Descriptor("cache device name (suspend it first: dev:suspend DEVICE)") String device)
            throws IOException, InterruptedException {
        DeviceInfo info = manager.info(device).orElseThrow(
                () -> new InvalidArgumentException("no device named '" + device + "'; dev:list shows the devices"));
        if (info.state() == DeviceState.ACTIVE) {
            // not a cache: say so first; asked to suspend it, the user would pause the I/O of
            // everything stacked on it for nothing (the withTarget refusal is the one line)
            manager.withTarget(device, CacheTarget.class, t -> null);
        }
        if (info.state() != DeviceState.SUSPENDED) {
            throw new InvalidArgumentException(device + " is not suspended: run 'dev:suspend " + device
                    + "' first (and 'dev:resume " + device + "' after the check)");
        }
        List<String> problems = manager.withTarget(device, CacheTarget.class, t -> {
            BlockDevice cache = t.cacheDeviceForCheck();
            if (cache == null) {
                throw new InvalidArgumentException(device + ": its policy does not offer its cache device for checking");
            }
            CacheFormat f = Formats.detect(cache);
            if (f == null) {
                return List.of("the cache device holds no Strata cache superblock the check can read");
            }
            return f.scan(cache).problems();
        });
        if (problems.isEmpty()) {
            return device + ": clean";
        }
        StringBuilder sb = new StringBuilder(device + ": " + problems.size() + (problems.size() == 1 ? " problem" : " problems")
                + " (stop Strata and run strata-tool repair on the cache device; see docs/operations.md)");
        for (String p : problems) {
            sb.append('\n').append(p);
        }
        return sb.toString();
    }

    @Descriptor("check a suspended cache's on-disk metadata (usage)")
    public String check() {
        throw new InvalidArgumentException("usage: cache:check DEVICE  (a suspended cache device: dev:suspend DEVICE first)");
    }
}
