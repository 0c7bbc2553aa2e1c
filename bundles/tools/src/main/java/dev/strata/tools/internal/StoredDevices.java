package dev.strata.tools.internal;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.stream.Stream;

/**
 * The device definitions a distribution has stored (Configuration Admin's files under
 * {@code var/config/}, and the {@code deploy/*.cfg} files), read without a framework: the tool
 * needs them to tell which device identity a backing device file carries, because a cache's
 * superblock names its backing device by that identity, which is not in the file itself. Without
 * it, {@code writeback} onto the wrong file of the right size would write the dirty blocks there
 * and leave the cache clean: the real backing device then reads stale data for good.
 */
final class StoredDevices {
    /** One stored definition of a device over a file ({@code file} or {@code direct}). */
    record FileDevice(String name, String id, Path file) {
    }

    /** Any stored definition's name and identity (a cache's backing may be a stacked device). */
    record Device(String name, String id, String type) {
    }

    private final List<FileDevice> files = new ArrayList<>();
    private final List<Device> devices = new ArrayList<>();

    private StoredDevices() {
    }

    /** The definitions stored under {@code home}; none if it is null or holds none. */
    static StoredDevices of(Path home) throws IOException {
        StoredDevices s = new StoredDevices();
        if (home == null) {
            return s;
        }
        Path config = home.resolve("var/config");
        if (Files.isDirectory(config)) {
            try (Stream<Path> all = Files.walk(config)) {
                for (Path p : (Iterable<Path>) all.filter(f -> f.toString().endsWith(".config"))::iterator) {
                    s.add(home, felixConfig(p));
                }
            }
        }
        Path deploy = home.resolve("deploy");
        if (Files.isDirectory(deploy)) {
            try (Stream<Path> all = Files.list(deploy)) {
                for (Path p : (Iterable<Path>) all.filter(f -> f.getFileName().toString().startsWith("dev.strata.device-")
                        && f.toString().endsWith(".cfg"))::iterator) {
                    Properties props = new Properties();
                    try (Reader r = Files.newBufferedReader(p, StandardCharsets.UTF_8)) {
                        props.load(r);
                    }
                    Map<String, String> m = new HashMap<>();
                    props.stringPropertyNames().forEach(k -> m.put(k, props.getProperty(k).trim()));
                    s.add(home, m);
                }
            }
        }
        return s;
    }

    private void add(Path home, Map<String, String> def) {
        String name = def.get("name");
        String id = def.get("id");
        String type = def.get("type");
        if (name == null || id == null || type == null) {
            return;
        }
        devices.add(new Device(name, id, type));
        String path = def.get("arg.path");
        if (path != null && (type.equals("file") || type.equals("direct"))) {
            files.add(new FileDevice(name, id, home.resolve(path)));
        }
    }

    /** The stored devices over {@code file} (the same file, however it is named). */
    List<FileDevice> over(Path file) {
        List<FileDevice> found = new ArrayList<>();
        for (FileDevice d : files) {
            try {
                if (Files.exists(d.file()) && Files.isSameFile(d.file(), file)) {
                    found.add(d);
                }
            } catch (IOException e) {
                // a definition whose file cannot be looked at names no file we were given
            }
        }
        return found;
    }

    /** The stored device with identity {@code id}, if any. */
    Optional<Device> withId(String id) {
        return devices.stream().filter(d -> d.id().equals(id)).findFirst();
    }

    /**
     * Felix Configuration Admin's file format, as far as definitions use it: one {@code key=value}
     * per line, a value a quoted string ({@code "…"}, backslash escapes) with an optional type
     * letter before it ({@code L"1"}); other values are not needed here and are skipped.
     */
    static Map<String, String> felixConfig(Path p) throws IOException {
        Map<String, String> m = new HashMap<>();
        for (String line : Files.readAllLines(p, StandardCharsets.UTF_8)) {
            int eq = line.indexOf('=');
            if (eq <= 0 || line.startsWith("#")) {
                continue;
            }
            String key = line.substring(0, eq).trim();
            String v = line.substring(eq + 1).trim();
            if (!v.isEmpty() && Character.isLetter(v.charAt(0))) {
                v = v.substring(1);
            }
            if (v.length() < 2 || v.charAt(0) != '"' || v.charAt(v.length() - 1) != '"') {
                continue;
            }
            m.put(key, unescape(v.substring(1, v.length() - 1)));
        }
        return m;
    }

    private static String unescape(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && i + 1 < s.length()) {
                char n = s.charAt(++i);
                if (n == 'u' && i + 4 < s.length()) {
                    b.append((char) Integer.parseInt(s.substring(i + 1, i + 5), 16));
                    i += 4;
                } else {
                    b.append(switch (n) {
                        case 'n' -> '\n';
                        case 't' -> '\t';
                        case 'r' -> '\r';
                        default -> n;
                    });
                }
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }
}
