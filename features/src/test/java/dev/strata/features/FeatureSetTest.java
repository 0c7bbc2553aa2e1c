package dev.strata.features;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FeatureSetTest {
    @TempDir
    Path dir;

    private void feature(String name, String bundle, String... requires) throws IOException {
        StringBuilder req = new StringBuilder();
        for (String r : requires) {
            req.append(req.length() == 0 ? "" : ",").append("\"g:").append(r).append(":osgifeature:1.0\"");
        }
        Files.writeString(dir.resolve(name + ".json"), """
                { "feature-resource-version": "1.0", "id": "g:%s:osgifeature:1.0",
                  "bundles": [ { "id": "g:%s:1.0" } ],
                  "configurations": { "p.q": { "n:Long": 5 } },
                  "extensions": { "dev.strata.requires": { "type": "text", "kind": "mandatory", "text": [ %s ] } } }
                """.formatted(name, bundle, req));
    }

    @Test
    void closureListsNeededFeaturesFirst() throws IOException {
        feature("a", "ba");
        feature("b", "bb", "a");
        feature("c", "bc", "b", "a");
        FeatureSet set = FeatureSet.read(dir);
        assertEquals(List.of("a", "b", "c"), set.closure("c"));
        assertEquals(List.of("b", "a"), set.requires("c"));
        assertEquals("bc-1.0.jar", FeatureSet.fileName(set.bundles("c").get(0)));
    }

    @Test
    void anUnknownRequiredFeatureIsRefusedAtRead() throws IOException {
        feature("b", "bb", "missing");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> FeatureSet.read(dir));
        assertEquals("feature b requires missing, which is not in the set", e.getMessage());
    }

    @Test
    void aCycleIsRefusedAtRead() throws IOException {
        feature("a", "ba", "b");
        feature("b", "bb", "a");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> FeatureSet.read(dir));
        assertTrue(e.getMessage().contains("requires itself"), e.getMessage());
    }

    @Test
    void karafXmlNamesBundlesFeaturesAndConfigurations() throws IOException {
        feature("a", "ba");
        feature("b", "bb", "a");
        String xml = KarafFeaturesXml.generate(FeatureSet.read(dir), "r");
        assertTrue(xml.contains("<feature name=\"b\" version=\"1.0\">\n    <feature>a</feature>\n    <bundle>mvn:g/bb/1.0</bundle>\n"
                + "    <config name=\"p.q\">\n      n = 5\n    </config>\n"), xml);
    }
}
