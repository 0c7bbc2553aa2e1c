package dev.strata.core.internal.config;

import java.io.IOException;
import java.io.StringReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Dictionary;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

import dev.strata.core.internal.DeviceDefinition;

/**
 * Whether a configuration FileInstall stored from its {@code .cfg} file is a read of that file
 * half-rewritten: a truncated but non-empty definition. FileInstall 3.7.4 writes a configuration
 * back into its file in place (truncate, then an {@code OutputStreamWriter} over the file, whose
 * encoder hands the file 8192 bytes at a time: measured, a 8,493-byte definition went out as
 * writes of 8,192 and 301 bytes), and its poll can read the file in between. A file of at most
 * 8 KiB can only be read empty ({@link ConfigAdminStore#emptiedFile}); a longer one — a long
 * comment the user wrote, a long {@code arg.path}, non-ASCII characters, which FileInstall writes
 * as 6-byte {@code \\uXXXX} escapes — can be read cut after 8 KiB, 16 KiB, …, with the keys after
 * the cut missing and the value at the cut shortened: applied, that reloads a device to a
 * shortened path, without its identity or tunables, and FileInstall writes it back for good.
 *
 * <p>Such a read is told from a user's edit by two facts at the moment Configuration Admin
 * stores it (the synchronous listener runs inside FileInstall's update, before FileInstall's own
 * write-back of it): (1) its shape — each of its keys has the last valid definition's value,
 * except at most one whose value is a shorter start of that value, and it lacks keys that one
 * had; (2) the file — which was over 8 KiB at some update the store saw (else it was written
 * in one piece and can only be read empty), and either holds something else by now (the write
 * went on, or the next write-back began: seen in the real FileInstall, an empty file), or holds
 * exactly the read, over 8 KiB and cut within 3 bytes under a multiple of 8192 (a write stalled
 * at a buffer's end). A user's edit that only deleted lines leaves the file holding the edit, at
 * a length that is almost never such a multiple, so it is applied as before.
 */
final class TornRead {
    /** The size of each write FileInstall's writer hands the file. */
    static final int WRITE_CHUNK = 8192;
    /** A multi-byte character that does not fit in the buffer's last bytes moves to the next write. */
    private static final int SLACK = 3;

    private TornRead() {
    }

    /**
     * @param props the configuration as just stored
     * @param last the last valid definition stored under the same PID (null: none)
     * @param largest the largest size its file had at any update since (bytes): a file never over
     *        8 KiB was written in one piece and can only be read empty
     */
    static boolean isTorn(Dictionary<String, ?> props, DeviceDefinition last, long largest) {
        Object url = props.get(DefinitionCodec.FILEINSTALL_FILENAME);
        if (last == null || url == null || largest < WRITE_CHUNK - SLACK) {
            return false;
        }
        // the identity is left out: core stamps one into a definition that has none, a cut read too
        // (the manager's delivery can read it before this listener runs), and a cut can drop it
        Map<String, String> read = withoutId(definitionKeys(props));
        if (read.isEmpty() || !prefixShaped(read, withoutId(definitionKeys(DefinitionCodec.encode(last))))) {
            return false; // empty (the emptied case), the same, or not a cut of the last one
        }
        Path file = file(props);
        if (file == null) {
            return false;
        }
        byte[] now;
        try {
            now = Files.readAllBytes(file);
        } catch (IOException e) {
            return false; // gone: a deletion, never undone
        }
        if (!read.equals(withoutId(parse(now)))) {
            // the file holds something else than was read: the write went on, or the next one
            // began (truncated: its size now says nothing of the size that was read)
            return true;
        }
        int rest = now.length % WRITE_CHUNK;
        return now.length >= WRITE_CHUNK - SLACK && (rest == 0 || rest >= WRITE_CHUNK - SLACK);
    }

    private static Map<String, String> withoutId(Map<String, String> keys) {
        keys.remove(DefinitionCodec.ID);
        return keys;
    }

    /** The size of the configuration's file now (bytes; -1: none, not a file, or unreadable). */
    static long fileSize(Dictionary<String, ?> props) {
        Path f = file(props);
        try {
            return f == null ? -1 : Files.size(f);
        } catch (IOException e) {
            return -1;
        }
    }

    private static Path file(Dictionary<String, ?> props) {
        Object url = props.get(DefinitionCodec.FILEINSTALL_FILENAME);
        try {
            return url == null ? null : Path.of(URI.create(String.valueOf(url).trim()));
        } catch (RuntimeException e) {
            return null; // not a file: URL
        }
    }

    /**
     * Every key of {@code read} has its value in {@code last}, but at most one, whose value is a
     * shorter start of the last one's (or, cut in its name, a shorter start of a key with no
     * value); {@code read} lacks at least one key of {@code last}, or has
     * that shortened value.
     */
    private static boolean prefixShaped(Map<String, String> read, Map<String, String> last) {
        int cut = 0;
        for (Map.Entry<String, String> e : read.entrySet()) {
            String was = last.get(e.getKey());
            if (was == null) {
                // cut inside a key's name: "arg.si", no value
                if (!e.getValue().isEmpty() || last.keySet().stream().noneMatch(k -> k.startsWith(e.getKey()))
                        || ++cut > 1) {
                    return false;
                }
                continue;
            }
            if (!was.equals(e.getValue())) {
                if (!was.startsWith(e.getValue()) || ++cut > 1) {
                    return false;
                }
            }
        }
        return cut == 1 || read.size() < last.size();
    }

    /** A definition's own keys (not Configuration Admin's, not FileInstall's file name), values trimmed. */
    static Map<String, String> definitionKeys(Dictionary<String, ?> props) {
        Map<String, String> m = new TreeMap<>();
        for (String k : Collections.list(props.keys())) {
            if (!k.startsWith("service.") && !k.equals(DefinitionCodec.FILEINSTALL_FILENAME)) {
                m.put(k, String.valueOf(props.get(k)).trim());
            }
        }
        return m;
    }

    /** The file's keys as FileInstall reads a {@code .cfg} (properties syntax: {@code \\uXXXX} escapes, comments). */
    private static Map<String, String> parse(byte[] content) {
        Properties p = new Properties();
        try {
            p.load(new StringReader(new String(content, StandardCharsets.UTF_8)));
        } catch (IOException | IllegalArgumentException e) {
            return Map.of(); // cut inside an escape: not what was read
        }
        Map<String, String> m = new TreeMap<>();
        p.forEach((k, v) -> m.put(String.valueOf(k), String.valueOf(v).trim()));
        return m;
    }
}
