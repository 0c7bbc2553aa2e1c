package dev.strata.features;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.stream.Stream;

import org.osgi.service.feature.Feature;
import org.osgi.service.feature.FeatureBundle;
import org.osgi.service.feature.FeatureExtension;
import org.osgi.service.feature.FeatureService;
import org.osgi.service.feature.ID;

/**
 * Strata's feature descriptors (OSGi Compendium R8 ch. 159 JSON, one {@code NAME.json} per
 * feature) read with the Felix Feature Service, and the one relation the specification leaves to
 * extensions: which features a feature needs. A feature is known by its artifact id
 * ({@code strata-core}); its bundles are Maven coordinates.
 *
 * <p>Two extensions, both {@code "type": "text"}:
 * <ul>
 * <li>{@value #REQUIRES} (mandatory): the ids of the features whose bundles this feature's bundles
 * need to resolve — exactly those, checked in the build by resolving each feature with only the
 * bundles of its closure;</li>
 * <li>{@value #KARAF} (optional): on a platform feature, the bundles ({@code groupId:artifactId})
 * of it that a Karaf {@code features.xml} keeps: Karaf brings its own Config Admin, FileInstall,
 * Gogo and logging, so only the rest is installed there.</li>
 * </ul>
 */
public final class FeatureSet {
    public static final String REQUIRES = "dev.strata.requires";
    public static final String KARAF = "dev.strata.karaf";

    private final Map<String, Feature> features;

    private FeatureSet(Map<String, Feature> features) {
        this.features = features;
        for (String name : features.keySet()) {
            closure(name); // unknown names and cycles fail at read time, not at install time
        }
    }

    /** Reads every {@code *.json} of {@code dir}, in name order. */
    public static FeatureSet read(Path dir) throws IOException {
        return read(dir, featureService());
    }

    /**
     * As {@link #read(Path)} with a given Feature Service: inside a framework the service loader
     * does not see the implementation a bundle embeds, so the bundle passes its own instance.
     */
    public static FeatureSet read(Path dir, FeatureService service) throws IOException {
        Map<String, Feature> byName = new LinkedHashMap<>();
        List<Path> files;
        try (Stream<Path> s = Files.list(dir)) {
            files = s.filter(p -> p.getFileName().toString().endsWith(".json")).sorted().toList();
        }
        for (Path file : files) {
            Feature f;
            try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
                f = service.readFeature(r);
            } catch (RuntimeException e) {
                throw new IOException(file.getFileName() + ": not a feature descriptor (" + e.getMessage() + ")", e);
            }
            String name = f.getID().getArtifactId();
            if (byName.putIfAbsent(name, f) != null) {
                throw new IOException(file.getFileName() + ": a second feature named " + name);
            }
        }
        return new FeatureSet(Collections.unmodifiableMap(byName));
    }

    /** The Felix implementation through the service loader (plain Java, no framework needed). */
    static FeatureService featureService() {
        Iterator<FeatureService> it = ServiceLoader.load(FeatureService.class, FeatureSet.class.getClassLoader()).iterator();
        if (!it.hasNext()) {
            throw new IllegalStateException("no OSGi Feature Service implementation on the class path (org.apache.felix.feature)");
        }
        return it.next();
    }

    public Set<String> names() {
        return features.keySet();
    }

    public Feature feature(String name) {
        Feature f = features.get(name);
        if (f == null) {
            throw new IllegalArgumentException("no feature " + name + " (features: " + String.join(", ", names()) + ")");
        }
        return f;
    }

    /** The features {@code name} names in its {@value #REQUIRES} extension, by name. */
    public List<String> requires(String name) {
        FeatureExtension ext = feature(name).getExtensions().get(REQUIRES);
        if (ext == null) {
            return List.of();
        }
        List<String> out = new ArrayList<>();
        for (String id : ext.getText()) {
            String[] parts = id.trim().split(":");
            if (parts.length < 3) {
                throw new IllegalArgumentException("feature " + name + ": " + REQUIRES + " entry '" + id + "' is not a feature id");
            }
            out.add(parts[1]);
        }
        return out;
    }

    /** {@code name} and everything it needs, needed features first. */
    public List<String> closure(String name) {
        LinkedHashSet<String> done = new LinkedHashSet<>();
        visit(name, done, new HashSet<>(), name);
        return List.copyOf(done);
    }

    private void visit(String name, LinkedHashSet<String> done, Set<String> path, String from) {
        if (done.contains(name)) {
            return;
        }
        if (!features.containsKey(name)) {
            throw new IllegalArgumentException("feature " + from + " requires " + name + ", which is not in the set");
        }
        if (!path.add(name)) {
            throw new IllegalArgumentException("feature " + name + " requires itself through " + String.join(" -> ", path));
        }
        for (String r : requires(name)) {
            visit(r, done, path, name);
        }
        path.remove(name);
        done.add(name);
    }

    /** The feature's own bundles, in descriptor order. */
    public List<ID> bundles(String name) {
        return feature(name).getBundles().stream().map(FeatureBundle::getID).toList();
    }

    /** The bundles of {@code name} a Karaf installs: all, or those its {@value #KARAF} extension keeps. */
    public List<ID> karafBundles(String name) {
        FeatureExtension ext = feature(name).getExtensions().get(KARAF);
        if (ext == null) {
            return bundles(name);
        }
        List<ID> out = new ArrayList<>();
        for (String ga : ext.getText()) {
            ID id = bundles(name).stream().filter(b -> (b.getGroupId() + ":" + b.getArtifactId()).equals(ga.trim())).findFirst()
                    .orElseThrow(() -> new IllegalArgumentException("feature " + name + ": " + KARAF + " keeps " + ga
                            + ", which is not one of its bundles"));
            out.add(id);
        }
        return out;
    }

    /** The file name Maven's copy-dependencies gives a bundle: {@code artifactId-version.jar}. */
    public static String fileName(ID bundle) {
        return bundle.getArtifactId() + "-" + bundle.getVersion()
                + bundle.getClassifier().map(c -> "-" + c).orElse("") + ".jar";
    }
}
