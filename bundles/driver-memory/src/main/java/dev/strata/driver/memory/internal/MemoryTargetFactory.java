package dev.strata.driver.memory.internal;

import dev.strata.api.BlockDevice;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.Target;
import dev.strata.api.TargetArguments;
import dev.strata.api.TargetContext;
import dev.strata.api.TargetFactory;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.osgi.service.component.annotations.Component;

/** Builds {@code memory} targets: {@code memory size=…}. */
@Component(service = TargetFactory.class, property = TargetFactory.TYPE + "=" + MemoryTarget.TYPE)
public class MemoryTargetFactory implements TargetFactory {
    /** Shared by every device this factory builds: together they may fill this much heap. */
    private final HeapBudget budget;

    public MemoryTargetFactory() {
        this(HeapBudget.ofHeap());
    }

    MemoryTargetFactory(HeapBudget budget) {
        this.budget = budget;
    }

    @Override
    public String usage() {
        return "memory size=SIZE  — a RAM disk (memory taken as written; contents lost on close)";
    }

    @Override
    public List<String> lowerDevices(Map<String, String> arguments) {
        parseSize(arguments);
        return List.of();
    }

    @Override
    public Target create(TargetContext context) {
        return new MemoryTarget(parseSize(context.arguments()), budget);
    }

    static long parseSize(Map<String, String> arguments) {
        String type = MemoryTarget.TYPE;
        TargetArguments args = TargetArguments.of(type, arguments, Set.of("size"));
        long size;
        try {
            size = args.size("size", BlockDevice.SECTOR, MemoryTarget.MAX_SIZE);
        } catch (InvalidArgumentException e) { // TargetArguments.parseSize does not name the type
            throw e.getMessage().startsWith(type + ":") ? e : new InvalidArgumentException(type + ": " + e.getMessage());
        }
        if (size % BlockDevice.SECTOR != 0) {
            throw new InvalidArgumentException(type + ": size=" + args.string("size")
                    + " is not a multiple of 512; use a multiple of 512 (e.g. 4096, 64M, 1G)");
        }
        return size;
    }
}
