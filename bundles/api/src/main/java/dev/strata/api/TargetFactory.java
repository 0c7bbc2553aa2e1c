package dev.strata.api;

import java.io.IOException;
import java.util.List;
import java.util.Map;

/**
 * Builds {@link Target}s of one type. Registered as an OSGi service with the property
 * {@value #TYPE}{@code =<type>}, usually by a Declarative Services component. When the service
 * goes away (its bundle is stopped or updated), the manager suspends and closes every target it
 * built; when a factory of the same type appears again, the targets are reopened from their
 * on-disk state with the same arguments.
 */
public interface TargetFactory {

    /** Service property naming the target type, e.g. {@code strata.target=file}. */
    String TYPE = "strata.target";

    /** One line for {@code dev:targets}: the arguments this type takes. */
    String usage();

    /**
     * The names of the mapped devices the arguments refer to (e.g. the values of
     * {@code backing=} and {@code cache=}), so the manager can check and record dependencies
     * before anything is built. Leaf targets return an empty list.
     *
     * @throws InvalidArgumentException if the arguments are malformed
     */
    List<String> lowerDevices(Map<String, String> arguments);

    /**
     * Builds (or reopens) a target. Must validate every argument before touching any device and
     * throw {@link InvalidArgumentException} with one clear line, changing nothing, on a mistake.
     */
    Target create(TargetContext context) throws IOException;
}
