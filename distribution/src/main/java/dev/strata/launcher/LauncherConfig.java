package dev.strata.launcher;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * {@code conf/config.properties}: framework properties plus the launcher's own {@code strata.*}
 * keys. {@code ${name}} is replaced by a system property or another key of the file; a system
 * property of the same name overrides a key (so {@code -Dfelix.fileinstall.poll=200} works).
 */
public final class LauncherConfig {

    /** Prefix of the start level rules: {@code strata.startlevel.<symbolic-name>[*]=N}. */
    static final String START_LEVEL_PREFIX = "strata.startlevel.";

    private final Map<String, String> properties;

    LauncherConfig(Map<String, String> properties) {
        this.properties = properties;
    }

    public static LauncherConfig load(Path file, Map<String, String> base) throws IOException {
        Properties raw = new Properties();
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            raw.load(r);
        }
        Map<String, String> merged = new LinkedHashMap<>();
        for (String key : raw.stringPropertyNames()) {
            merged.put(key, raw.getProperty(key));
        }
        for (String key : System.getProperties().stringPropertyNames()) {
            if (merged.containsKey(key)) {
                merged.put(key, System.getProperty(key));
            }
        }
        merged.putAll(base);
        Map<String, String> resolved = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : merged.entrySet()) {
            resolved.put(e.getKey(), substitute(e.getValue(), merged, 0));
        }
        return new LauncherConfig(resolved);
    }

    static String substitute(String value, Map<String, String> props, int depth) {
        if (depth > 16) {
            throw new IllegalArgumentException("conf/config.properties: recursive ${...} in " + value);
        }
        StringBuilder out = new StringBuilder();
        int i = 0;
        while (i < value.length()) {
            int start = value.indexOf("${", i);
            if (start < 0) {
                out.append(value, i, value.length());
                break;
            }
            int end = value.indexOf('}', start);
            if (end < 0) {
                out.append(value, i, value.length());
                break;
            }
            out.append(value, i, start);
            String name = value.substring(start + 2, end);
            String v = System.getProperty(name);
            if (v == null) {
                v = props.get(name);
            }
            out.append(v == null ? "" : substitute(v, props, depth + 1));
            i = end + 1;
        }
        return out.toString();
    }

    public String get(String key) {
        return properties.get(key);
    }

    public String get(String key, String def) {
        String v = properties.get(key);
        return v == null || v.isBlank() ? def : v.trim();
    }

    public long seconds(String key, long def) {
        String v = get(key, null);
        if (v == null) {
            return def;
        }
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("conf/config.properties: " + key + " must be a number of seconds, not '" + v + "'");
        }
    }

    public void put(String key, String value) {
        properties.put(key, value);
    }

    /** The properties handed to the framework (every key, including the launcher's own). */
    public Map<String, String> frameworkProperties() {
        return new LinkedHashMap<>(properties);
    }

    /** A comma or whitespace separated list. */
    public List<String> list(String key) {
        List<String> out = new ArrayList<>();
        String v = get(key, "");
        for (String s : v.split("[,\\s]+")) {
            if (!s.isBlank()) {
                out.add(s.trim());
            }
        }
        return out;
    }

    /**
     * The start level of a bundle: the rule {@code strata.startlevel.<bsn>} or the longest matching
     * prefix rule {@code strata.startlevel.<prefix>*}, else {@code strata.startlevel.default}.
     */
    public int startLevel(String symbolicName) {
        String exact = properties.get(START_LEVEL_PREFIX + symbolicName);
        if (exact != null) {
            return parseLevel(START_LEVEL_PREFIX + symbolicName, exact);
        }
        String best = null;
        for (String key : properties.keySet()) {
            if (key.startsWith(START_LEVEL_PREFIX) && key.endsWith("*")) {
                String prefix = key.substring(START_LEVEL_PREFIX.length(), key.length() - 1);
                if (symbolicName.startsWith(prefix) && (best == null || key.length() > best.length())) {
                    best = key;
                }
            }
        }
        if (best != null) {
            return parseLevel(best, properties.get(best));
        }
        return parseLevel(START_LEVEL_PREFIX + "default", get(START_LEVEL_PREFIX + "default", "1"));
    }

    private static int parseLevel(String key, String v) {
        try {
            int level = Integer.parseInt(v.trim());
            if (level < 1) {
                throw new NumberFormatException();
            }
            return level;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("conf/config.properties: " + key + " must be a start level >= 1, not '" + v + "'");
        }
    }
}
