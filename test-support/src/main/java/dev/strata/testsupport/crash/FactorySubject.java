package dev.strata.testsupport.crash;

import dev.strata.api.BlockDevice;
import dev.strata.api.Target;
import dev.strata.api.TargetFactory;
import dev.strata.testsupport.target.SimpleTargetContext;

import java.io.IOException;
import java.util.List;

/**
 * A {@link CrashTestSubject} for a target built by its {@link TargetFactory}: the arguments name
 * the lower devices by the {@link DeviceSpec} names, and a reopen is another {@code create} with
 * the same arguments (a factory builds <em>or reopens</em> from on-disk state).
 *
 * <pre>{@code
 * new FactorySubject("writeboost", new WriteboostFactory(), "backing=slow cache=fast",
 *         List.of(new DeviceSpec("slow", 64 << 20, 4096), new DeviceSpec("fast", 8 << 20, 4096)))
 *     .logStructured(true);
 * }</pre>
 * Override {@link #background}, {@link #checkOffline} or {@link #workload} in a subclass.
 */
public class FactorySubject implements CrashTestSubject {
    private final String name;
    private final TargetFactory factory;
    private final String arguments;
    private final List<DeviceSpec> devices;
    private boolean logStructured;
    private Workload workload = Workload.DEFAULT;

    public FactorySubject(String name, TargetFactory factory, String arguments, List<DeviceSpec> devices) {
        this.name = name;
        this.factory = factory;
        this.arguments = arguments;
        this.devices = List.copyOf(devices);
    }

    /** Also check the log property. */
    public FactorySubject logStructured(boolean on) {
        this.logStructured = on;
        return this;
    }

    public FactorySubject workload(Workload w) {
        this.workload = w;
        return this;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public List<DeviceSpec> devices() {
        return devices;
    }

    @Override
    public BlockDevice create(List<BlockDevice> lower) throws IOException {
        return build(lower);
    }

    @Override
    public BlockDevice reopen(List<BlockDevice> lower) throws IOException {
        return build(lower);
    }

    /** The target over {@code lower} (in {@link #devices()} order). */
    protected Target build(List<BlockDevice> lower) throws IOException {
        SimpleTargetContext ctx = SimpleTargetContext.of(name, arguments);
        for (int i = 0; i < devices.size(); i++) {
            ctx.with(devices.get(i).name(), lower.get(i));
        }
        return factory.create(ctx);
    }

    @Override
    public boolean logStructured() {
        return logStructured;
    }

    @Override
    public Workload workload() {
        return workload;
    }
}
