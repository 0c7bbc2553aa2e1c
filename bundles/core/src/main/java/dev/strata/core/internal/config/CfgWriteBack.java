package dev.strata.core.internal.config;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Dictionary;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.osgi.framework.BundleContext;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.cm.ConfigurationEvent;
import org.osgi.service.cm.ConfigurationListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps each {@code deploy/*.cfg} file holding its configuration, in place of FileInstall's own
 * write-back — which rewrote the file in place (truncate, then 8 KiB writes), so that FileInstall's
 * poll could read it empty or cut short. Active only where that write-back is off
 * ({@code felix.fileinstall.enableConfigSave=false}, as the distribution ships): two writers of one
 * file would race.
 *
 * <p>Rules (why each):
 * <ul>
 * <li>Every change is written with {@link AtomicFile}: no reader, FileInstall's poll included, ever
 *     sees a partial file.
 * <li>The file is written <em>before</em> the configuration is updated (or deleted before it is
 *     deleted). FileInstall re-reads every file at every start and the file wins: a crash between
 *     the two steps leaves the new state in the file, which the next start applies (a
 *     {@code format=true} forgotten stays forgotten; a removed device does not come back).
 * <li>Compare and swap: a change is written only while the file still holds what the configuration
 *     holds (what FileInstall last read from it) or what this process last wrote into it (see
 *     {@link #newer}), and is still, just before the rename, the file that was read. A file changed since — a user's edit FileInstall has
 *     not applied yet, or one still being written in place by an editor, which FileInstall read
 *     half-written — is never overwritten by a definition made from the older read: the change is
 *     refused (one line) and FileInstall's next poll applies the file.
 * <li>A read-only file, or a directory that refuses the temporary file (read-only, full), changes
 *     nothing: neither the file nor the configuration (one line).
 * </ul>
 * All of it runs under this object's lock, across the file's I/O (two forced writes): management
 * operations, rare, never on a block I/O path.
 */
final class CfgWriteBack implements ConfigurationListener {
    private static final Logger LOG = LoggerFactory.getLogger(CfgWriteBack.class);
    /** FileInstall's two names for its write-back switch (3.7.4: either one, read as a boolean, default on). */
    static final String ENABLE = "felix.fileinstall.enableConfigSave";
    static final String DISABLE = "felix.fileinstall.disableConfigSave";
    /** The encoding FileInstall reads {@code .cfg} files in (default ISO-8859-1). */
    static final String ENCODING = "felix.fileinstall.configEncoding";
    private static final Pattern VARIABLE = Pattern.compile("\\$\\{([^${}]+)}");

    private final boolean enabled;
    private final UnaryOperator<String> properties;
    /** PID → file of every configuration made from a file, to delete the file with the configuration. */
    private final Map<String, String> pidToFile = new ConcurrentHashMap<>();
    /** PID → its own keys at its last update seen: a file is deleted with it only while it holds them. */
    private final Map<String, Map<String, String>> lastKeys = new ConcurrentHashMap<>();
    /** File → the text this process last wrote into it (see {@link #newer}). */
    private final Map<Path, String> written = new ConcurrentHashMap<>();
    private final java.nio.charset.Charset encoding;
    private volatile ConfigurationAdmin cm;

    CfgWriteBack(boolean enabled, UnaryOperator<String> properties) {
        this.enabled = enabled;
        this.properties = properties;
        String e = properties.apply(ENCODING);
        this.encoding = e == null || e.isBlank() ? StandardCharsets.ISO_8859_1 : java.nio.charset.Charset.forName(e.trim());
    }

    /** As FileInstall decides whether it writes back (its {@code shouldSaveConfig}): on unless a switch says false. */
    static CfgWriteBack of(BundleContext context) {
        String s = context.getProperty(ENABLE);
        if (s == null) {
            s = context.getProperty(DISABLE); // sic: FileInstall reads this one the same way
        }
        boolean fileInstallSaves = s == null || Boolean.parseBoolean(s.trim());
        return new CfgWriteBack(!fileInstallSaves, context::getProperty);
    }

    boolean enabled() {
        return enabled;
    }

    /** Remembers the files of the configurations there now, and removes what a crash left. */
    void start(ConfigurationAdmin cm, String watchedDir) {
        this.cm = cm;
        if (watchedDir != null && !watchedDir.isBlank()) {
            AtomicFile.removeLeftovers(Path.of(watchedDir.trim()));
        }
        try {
            Configuration[] all = cm.listConfigurations("(" + DefinitionCodec.FILEINSTALL_FILENAME + "=*)");
            if (all != null) {
                for (Configuration c : all) {
                    remember(c.getPid(), c.getProperties());
                }
            }
        } catch (IOException | org.osgi.framework.InvalidSyntaxException e) {
            LOG.warn("cannot list the configurations made from files: {}", e.getMessage());
        }
    }

    /** Updates {@code c} to {@code next}, its file first. */
    synchronized void update(Configuration c, Dictionary<String, Object> next) throws IOException {
        Dictionary<String, Object> current = c.getProperties();
        Path file = enabled ? file(current) : null;
        if (file != null) {
            Content now = content(file);
            // a deleted file is not written again: its device goes (FileInstall deletes the
            // configuration, or the next start does); until then the configuration alone changes
            if (now != null) {
                if (!holds(now.text, current) && !now.text.equals(written.get(file))) {
                    throw new IOException("its file " + file + " was changed since FileInstall last read it ("
                            + difference(now.text, current) + "; FileInstall applies the change at its next poll); nothing was changed");
                }
                write(file, now, next);
            }
        }
        c.update(next);
        remember(c.getPid(), next);
    }

    /**
     * Restores {@code c} to {@code next} over an emptied or invalid read of its file: the file is
     * written back only if it still holds that read (a file emptied for good, an invalid edit); a
     * file that holds something else by now (an editor that was writing it in place has finished)
     * is left to FileInstall, whose next poll applies it.
     */
    synchronized void restore(Configuration c, Dictionary<String, Object> next) throws IOException {
        Dictionary<String, Object> current = c.getProperties();
        Path file = enabled ? file(current) : null;
        if (file != null) {
            Content now = content(file);
            if (now != null && holds(now.text, current)) {
                write(file, now, next);
            }
        }
        c.update(next);
        remember(c.getPid(), next);
    }

    /** Deletes {@code c}, its file first. */
    synchronized void delete(Configuration c) throws IOException {
        Path file = enabled ? file(c.getProperties()) : null;
        if (file != null) {
            AtomicFile.delete(file);
            written.remove(file);
        }
        pidToFile.remove(c.getPid());
        lastKeys.remove(c.getPid());
        try {
            c.delete();
        } catch (IllegalStateException e) {
            // already deleted: FileInstall saw the file go first
        }
    }

    /**
     * Configuration Admin's asynchronous events, in order: the file of a configuration made from
     * one that is not a device's (an NBD export's, say) goes with the configuration, as with
     * FileInstall's write-back. A device's file is deleted by {@link #delete}, before its
     * configuration and on the deleting thread: an event handled later could delete a file a user
     * has written anew meanwhile.
     */
    @Override
    public void configurationEvent(ConfigurationEvent event) {
        if (!enabled || DefinitionCodec.FACTORY_PID.equals(event.getFactoryPid())) {
            return;
        }
        if (event.getType() == ConfigurationEvent.CM_DELETED) {
            String url = pidToFile.remove(event.getPid());
            Map<String, String> last = lastKeys.remove(event.getPid());
            Path file = url == null ? null : path(url);
            if (file != null) {
                synchronized (this) {
                    try {
                        String text = read(file);
                        // only the file as the configuration left it: not one written anew since
                        // (a user's new file of the same name), which FileInstall is about to read
                        if (text != null && (fileKeys(text).equals(last) || text.equals(written.get(file)))) {
                            AtomicFile.delete(file);
                            written.remove(file);
                        }
                    } catch (IOException e) {
                        LOG.warn("configuration {} was deleted, but its file stays (FileInstall will create it again "
                                + "at the next start): {}", event.getPid(), e.getMessage());
                    }
                }
            }
        } else if (event.getType() == ConfigurationEvent.CM_UPDATED && cm != null) {
            try {
                Configuration[] cs = cm.listConfigurations("(service.pid=" + event.getPid() + ")");
                if (cs != null && cs.length > 0) {
                    remember(event.getPid(), cs[0].getProperties());
                }
            } catch (IOException | org.osgi.framework.InvalidSyntaxException | RuntimeException e) {
                // not readable now: its file is looked up again at its next update
            }
        }
    }

    private void remember(String pid, Dictionary<String, ?> props) {
        Object url = props == null ? null : props.get(DefinitionCodec.FILEINSTALL_FILENAME);
        if (url != null) {
            pidToFile.put(pid, String.valueOf(url));
            lastKeys.put(pid, keys(props));
        }
    }

    private void write(Path file, Content now, Dictionary<String, Object> next) throws IOException {
        if (!Files.isWritable(file)) {
            throw new IOException("its file " + file + " is read-only; nothing was changed");
        }
        String out = CfgFormat.render(now.text, CfgFormat.ordered(keys(next)), this::substitute);
        if (!out.equals(now.text)) {
            AtomicFile.write(file, out.getBytes(encoding), now.seen);
        }
        written.put(file, out);
    }

    /** Whether the file's text holds exactly the configuration's keys and values (as FileInstall reads it). */
    boolean holds(String text, Dictionary<String, ?> props) {
        return fileKeys(text).equals(keys(props));
    }

    /** The file's keys and values as FileInstall stores them (substituted). */
    private Map<String, String> fileKeys(String text) {
        Map<String, String> file = new TreeMap<>();
        CfgFormat.parse(text).forEach((k, v) -> file.put(k, substitute(v)));
        return file;
    }

    /**
     * The configuration as its file holds it, if {@code props} is a stale read of the file: the
     * file still holds what this process last wrote into it, and that is not {@code props}.
     * FileInstall reads a file and then updates the configuration, not at once: a read made just
     * before a write here can land after that write's own update, and put the older definition
     * back. FileInstall's next poll reads the file again (it changed since that read) and stores
     * it; until then the manager must not apply (or write back) the older one. Otherwise {@code props}.
     */
    synchronized Dictionary<String, Object> newer(Dictionary<String, Object> props) {
        Path file = enabled ? file(props) : null;
        String ours = file == null ? null : written.get(file);
        if (ours == null) {
            return props;
        }
        String text;
        try {
            text = read(file);
        } catch (IOException e) {
            return props; // being written in place: not ours as it is now
        }
        if (!ours.equals(text) || holds(text, props)) {
            return props;
        }
        java.util.Hashtable<String, Object> h = new java.util.Hashtable<>(fileKeys(text));
        for (String k : Collections.list(props.keys())) {
            if (k.startsWith("service.") || k.equals(DefinitionCodec.FILEINSTALL_FILENAME)) {
                h.put(k, props.get(k));
            }
        }
        return h;
    }

    /** The keys whose values differ between the file and the configuration, for the message. */
    private String difference(String text, Dictionary<String, ?> props) {
        Map<String, String> file = new TreeMap<>();
        CfgFormat.parse(text).forEach((k, v) -> file.put(k, substitute(v)));
        Map<String, String> conf = keys(props);
        java.util.Set<String> all = new java.util.TreeSet<>(file.keySet());
        all.addAll(conf.keySet());
        StringBuilder sb = new StringBuilder();
        for (String k : all) {
            if (!java.util.Objects.equals(file.get(k), conf.get(k))) {
                sb.append(sb.length() == 0 ? "" : ", ").append(k).append(": file ").append(file.getOrDefault(k, "(none)"))
                        .append(", configuration ").append(conf.getOrDefault(k, "(none)"));
            }
        }
        return sb.toString();
    }

    /** A configuration's own keys: not Configuration Admin's, not FileInstall's file name. */
    static Map<String, String> keys(Dictionary<String, ?> props) {
        Map<String, String> m = new TreeMap<>();
        if (props != null) {
            for (String k : Collections.list(props.keys())) {
                if (!k.startsWith("service.") && !k.equals(DefinitionCodec.FILEINSTALL_FILENAME)) {
                    m.put(k, String.valueOf(props.get(k)));
                }
            }
        }
        return m;
    }

    /** {@code ${name}} replaced as FileInstall does when it reads a file: framework, then system properties. */
    String substitute(String value) {
        Matcher m = VARIABLE.matcher(value);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String name = m.group(1);
            String v = name.startsWith("env:") ? System.getenv(name.substring(4)) : properties.apply(name);
            m.appendReplacement(out, Matcher.quoteReplacement(v == null ? "" : v));
        }
        m.appendTail(out);
        return out.toString();
    }

    /** A file's text and what the file was when it was read. */
    private record Content(String text, AtomicFile.Seen seen) {
    }

    /** {@code file}'s text, null if it does not exist; refused while someone writes it (it changes as it is read). */
    private Content content(Path file) throws IOException {
        AtomicFile.Seen before = AtomicFile.seen(file);
        if (before == null) {
            return null;
        }
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            return null;
        }
        if (!before.equals(AtomicFile.seen(file))) {
            throw new IOException("its file " + file + " is being written (by an editor?); nothing was changed, try again");
        }
        return new Content(new String(bytes, encoding), before);
    }

    private String read(Path file) throws IOException {
        Content c = content(file);
        return c == null ? null : c.text;
    }

    private static Path file(Dictionary<String, ?> props) {
        Object url = props == null ? null : props.get(DefinitionCodec.FILEINSTALL_FILENAME);
        return url == null ? null : path(String.valueOf(url));
    }

    private static Path path(String url) {
        try {
            Path p = Path.of(URI.create(url.trim()));
            String n = p.getFileName() == null ? "" : p.getFileName().toString();
            return n.endsWith(".cfg") ? p : null; // .config files are FileInstall's typed format: not ours to write
        } catch (RuntimeException e) {
            return null; // not a file: URL
        }
    }
}
