package dev.strata.core.internal.config;

import java.util.Collections;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.Map;
import java.util.TreeMap;

import dev.strata.api.InvalidArgumentException;
import dev.strata.core.internal.DeviceDefinition;

/**
 * A device definition as Configuration Admin properties (factory PID {@value #FACTORY_PID}):
 * <pre>
 * name      = cache0                 the device name
 * type      = linear                 the target type
 * arg.KEY   = VALUE                  one per target argument, e.g. arg.device = disk0
 * id        = 3f0c…                  the device's identity (UUID), stamped at creation
 * tunable.KEY = VALUE                one per persisted tunable (dev:message), applied at every build
 * staged.for = disk0                 only while an attach to disk0 is not committed (see Attacher)
 * lower.of  = disk0                  on the lower device cache:attach made for disk0 (cache:detach collapses onto it)
 * </pre>
 * Other properties ({@code service.pid}, {@code service.factoryPid},
 * {@code felix.fileinstall.filename}, …) are ignored. When {@code name} is missing, it is taken
 * from a named factory PID ({@code dev.strata.device~NAME}) or from the FileInstall file name
 * ({@code dev.strata.device-NAME.cfg}). Values are read as strings.
 */
public final class DefinitionCodec {
    public static final String FACTORY_PID = "dev.strata.device";
    public static final String NAME = "name";
    public static final String TYPE = "type";
    public static final String ARG = "arg.";
    public static final String ID = "id";
    public static final String TUNABLE = "tunable.";
    public static final String STAGED_FOR = "staged.for";
    public static final String LOWER_OF = "lower.of";
    static final String FILEINSTALL_FILENAME = "felix.fileinstall.filename";

    private DefinitionCodec() {
    }

    public static Dictionary<String, Object> encode(DeviceDefinition def) {
        Hashtable<String, Object> props = new Hashtable<>();
        props.put(NAME, def.name());
        props.put(TYPE, def.type());
        def.arguments().forEach((k, v) -> props.put(ARG + k, v));
        if (def.id() != null) {
            props.put(ID, def.id());
        }
        def.tunables().forEach((k, v) -> props.put(TUNABLE + k, v));
        if (def.stagedFor() != null) {
            props.put(STAGED_FOR, def.stagedFor());
        }
        if (def.lowerOf() != null) {
            props.put(LOWER_OF, def.lowerOf());
        }
        return props;
    }

    /**
     * The properties to store for {@code def} in a configuration that has {@code current}
     * properties: the definition's keys replace {@code name}, {@code type} and every
     * {@code arg.*}; other properties (FileInstall's {@code felix.fileinstall.filename}, which ties
     * the configuration to its {@code .cfg} file) are kept. {@code service.*} keys are left to
     * Configuration Admin.
     */
    public static Dictionary<String, Object> merge(Dictionary<String, ?> current, DeviceDefinition def) {
        Hashtable<String, Object> props = new Hashtable<>();
        if (current != null) {
            for (String key : Collections.list(current.keys())) {
                if (!key.equals(NAME) && !key.equals(TYPE) && !key.equals(ID) && !key.equals(STAGED_FOR) && !key.equals(LOWER_OF)
                        && !key.startsWith(ARG)
                        && !key.startsWith(TUNABLE) && !key.startsWith("service.")) {
                    props.put(key, current.get(key));
                }
            }
        }
        Dictionary<String, Object> mine = encode(def);
        for (String key : Collections.list(mine.keys())) {
            props.put(key, mine.get(key));
        }
        return props;
    }

    /**
     * Reads a definition.
     *
     * @throws InvalidArgumentException if the name or type is missing or invalid
     */
    public static DeviceDefinition decode(String pid, Dictionary<String, ?> props) {
        Object name = props.get(NAME);
        String n = name == null ? nameFrom(pid, props.get(FILEINSTALL_FILENAME)) : String.valueOf(name).trim();
        if (n == null) {
            throw new InvalidArgumentException("configuration " + pid + " has no '" + NAME + "' property");
        }
        Object type = props.get(TYPE);
        if (type == null) {
            throw new InvalidArgumentException("configuration " + pid + " has no '" + TYPE + "' property");
        }
        Map<String, String> args = new TreeMap<>();
        for (String key : Collections.list(props.keys())) {
            if (key.startsWith(ARG) && key.length() > ARG.length()) {
                args.put(key.substring(ARG.length()), String.valueOf(props.get(key)).trim());
            }
        }
        Map<String, String> tunables = new TreeMap<>();
        for (String key : Collections.list(props.keys())) {
            if (key.startsWith(TUNABLE) && key.length() > TUNABLE.length()) {
                tunables.put(key.substring(TUNABLE.length()), String.valueOf(props.get(key)).trim());
            }
        }
        Object id = props.get(ID);
        String ident = id == null || String.valueOf(id).isBlank() ? null : String.valueOf(id).trim();
        Object staged = props.get(STAGED_FOR);
        String stagedFor = staged == null || String.valueOf(staged).isBlank() ? null : String.valueOf(staged).trim();
        Object of = props.get(LOWER_OF);
        String lowerOf = of == null || String.valueOf(of).isBlank() ? null : String.valueOf(of).trim();
        return new DeviceDefinition(DeviceDefinition.checkName(n),
                DeviceDefinition.checkType(String.valueOf(type).trim()), args, ident, tunables, stagedFor, lowerOf);
    }

    private static String nameFrom(String pid, Object fileName) {
        if (pid != null && pid.startsWith(FACTORY_PID + "~")) {
            return pid.substring(FACTORY_PID.length() + 1);
        }
        if (fileName != null) {
            String f = String.valueOf(fileName);
            f = f.substring(f.lastIndexOf('/') + 1);
            String prefix = FACTORY_PID + "-";
            if (f.startsWith(prefix) && f.endsWith(".cfg")) {
                return f.substring(prefix.length(), f.length() - 4);
            }
        }
        return null;
    }
}
