package dev.strata.features;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

import org.osgi.service.feature.Feature;
import org.osgi.service.feature.FeatureConfiguration;
import org.osgi.service.feature.ID;

/**
 * Writes a Karaf {@code features.xml} from the feature descriptors, so both come from one source:
 * one Karaf feature per descriptor with the same name, its bundles as {@code mvn:} URLs, its
 * required features as {@code <feature>} dependencies, its configurations as {@code <config>}
 * (properties; DS converts the strings to the typed values). Of a platform feature (one with a
 * {@value FeatureSet#KARAF} extension) only the bundles Karaf does not bring itself are kept.
 */
public final class KarafFeaturesXml {

    private KarafFeaturesXml() {
    }

    /** {@code KarafFeaturesXml FEATURES_DIR OUTPUT_FILE REPOSITORY_NAME}. */
    public static void main(String[] args) throws IOException {
        if (args.length != 3) {
            throw new IllegalArgumentException("usage: KarafFeaturesXml FEATURES_DIR OUTPUT_FILE REPOSITORY_NAME");
        }
        String xml = generate(FeatureSet.read(Path.of(args[0])), args[2]);
        Path out = Path.of(args[1]);
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(out, xml, StandardCharsets.UTF_8);
    }

    public static String generate(FeatureSet set, String repositoryName) {
        StringBuilder b = new StringBuilder();
        b.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        b.append("<!-- Generated from Strata's feature descriptors (features/src/main/features/*.json); do not edit. -->\n");
        b.append("<features xmlns=\"http://karaf.apache.org/xmlns/features/v1.6.0\" name=\"").append(esc(repositoryName)).append("\">\n");
        for (String name : set.names()) {
            Feature f = set.feature(name);
            b.append("  <feature name=\"").append(esc(name)).append("\" version=\"").append(osgiVersion(f.getID().getVersion())).append('"');
            f.getName().ifPresent(n -> b.append(" description=\"").append(esc(n)).append('"'));
            b.append(">\n");
            f.getDescription().ifPresent(d -> b.append("    <details>").append(esc(d)).append("</details>\n"));
            for (String r : set.requires(name)) {
                b.append("    <feature>").append(esc(r)).append("</feature>\n");
            }
            for (ID bundle : set.karafBundles(name)) {
                b.append("    <bundle>").append(esc(mvnUrl(bundle))).append("</bundle>\n");
            }
            for (FeatureConfiguration c : f.getConfigurations().values()) {
                b.append("    <config name=\"").append(esc(configName(c))).append("\">\n");
                for (Map.Entry<String, Object> e : new TreeMap<>(c.getValues()).entrySet()) {
                    b.append("      ").append(esc(e.getKey())).append(" = ").append(esc(String.valueOf(e.getValue()))).append('\n');
                }
                b.append("    </config>\n");
            }
            b.append("  </feature>\n");
        }
        b.append("</features>\n");
        return b.toString();
    }

    /** Karaf names a factory configuration {@code FACTORYPID-NAME}. */
    private static String configName(FeatureConfiguration c) {
        return c.getFactoryPid().map(fp -> fp + "-" + c.getPid().substring(c.getPid().indexOf('~') + 1)).orElse(c.getPid());
    }

    static String mvnUrl(ID id) {
        return "mvn:" + id.getGroupId() + "/" + id.getArtifactId() + "/" + id.getVersion()
                + id.getClassifier().map(c -> "/" + id.getType().orElse("jar") + "/" + c).orElse("");
    }

    /** 0.1.0-SNAPSHOT becomes 0.1.0.SNAPSHOT, as Karaf shows feature versions. */
    static String osgiVersion(String maven) {
        return maven.replace('-', '.');
    }

    private static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
