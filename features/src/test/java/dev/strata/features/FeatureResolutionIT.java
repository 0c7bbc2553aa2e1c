package dev.strata.features;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.osgi.resource.Resource;
import org.osgi.resource.Wire;
import org.osgi.service.feature.ID;
import org.osgi.service.resolver.ResolutionException;

import aQute.bnd.build.model.EE;
import aQute.bnd.osgi.repository.ResourcesRepository;
import aQute.bnd.osgi.resource.ResourceBuilder;
import aQute.bnd.osgi.resource.ResourceUtils;
import biz.aQute.resolve.AbstractResolveContext;
import biz.aQute.resolve.BndResolver;
import biz.aQute.resolve.GenericResolveContext;
import biz.aQute.resolve.ResolverLogger;

/**
 * Every feature resolves — with bnd's resolver, on Felix 7.0.5 and JavaSE-17, with
 * {@code effective:=active} requirements (DS services) counted — against only the bundles of the
 * features it names (transitively), and each feature it names directly is needed: without that
 * one, resolution fails. So a descriptor can neither forget a feature nor name one it does not
 * need. Bundles come from this module's test class path (the reactor's jars, hence an IT: the
 * check runs after {@code package}).
 */
class FeatureResolutionIT {
    private static FeatureSet set;
    private static Map<String, Path> jars;
    private static Resource framework;

    @BeforeAll
    static void load() throws Exception {
        set = FeatureSet.read(Path.of(System.getProperty("strata.features")));
        jars = new HashMap<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            Path p = Path.of(entry);
            if (Files.isRegularFile(p) && entry.endsWith(".jar")) {
                jars.putIfAbsent(p.getFileName().toString(), p);
            }
        }
        framework = resource(jars.entrySet().stream().filter(e -> e.getKey().startsWith("org.apache.felix.framework-"))
                .findFirst().orElseThrow(() -> new AssertionError("no Felix framework jar on the test class path")).getValue());
    }

    @Test
    void theSetIsTheOneTheIssueAsksFor() {
        assertEquals(new TreeSet<>(List.of("strata-core", "strata-daemons", "strata-drivers", "strata-mirror", "strata-nbd",
                "strata-readcache", "strata-runtime", "strata-shell", "strata-testkit", "strata-writeboost", "strata-writecache")),
                new TreeSet<>(set.names()));
    }

    @Test
    void everyFeatureResolvesWithExactlyTheFeaturesItNames() throws Exception {
        List<String> problems = new ArrayList<>();
        for (String name : set.names()) {
            List<Resource> own = resources(set.bundles(name));
            try {
                Map<Resource, List<Wire>> result = resolve(own, closureBundles(List.of(name)));
                for (Resource r : own) {
                    assertTrue(result.containsKey(r), name + ": " + ResourceUtils.getIdentity(r) + " not in the resolution");
                }
            } catch (ResolutionException e) {
                problems.add(name + " does not resolve with " + set.closure(name) + ": " + e.getMessage());
                continue;
            }
            for (String named : set.requires(name)) {
                List<String> others = new ArrayList<>(set.requires(name));
                others.remove(named);
                Set<Resource> without = closureBundles(others);
                without.addAll(own);
                if (without.containsAll(resources(set.bundles(named)))) {
                    problems.add(name + " names " + named + ", which the other features it names already bring");
                    continue;
                }
                try {
                    resolve(own, without);
                    problems.add(name + " names " + named + " but resolves without it");
                } catch (ResolutionException expected) {
                    // named for a reason
                }
            }
        }
        assertEquals(List.of(), problems);
    }

    @Test
    void everyStrataBundleIsInAFeature() {
        Set<String> inFeatures = set.names().stream().flatMap(n -> set.bundles(n).stream()).map(FeatureSet::fileName)
                .collect(Collectors.toSet());
        Set<String> strata = jars.keySet().stream().filter(n -> n.startsWith("dev.strata.")).collect(Collectors.toCollection(TreeSet::new));
        assertFalse(strata.isEmpty(), "no dev.strata bundles on the test class path");
        strata.removeAll(inFeatures);
        assertEquals(Set.of(), strata, "bundles in no feature");
    }

    @Test
    void aFeatureMissingWhatItNeedsFailsTheCheck() throws Exception {
        // the check itself can fail: writeboost's bundles without strata-core (no dev.strata.api, no DS)
        List<Resource> own = resources(set.bundles("strata-writeboost"));
        ResolutionException e = assertThrows(ResolutionException.class, () -> resolve(own, new LinkedHashSet<>(own)));
        assertTrue(e.getMessage().contains("dev.strata.api"), e.getMessage());
    }

    private static Set<Resource> closureBundles(List<String> names) throws Exception {
        Set<Resource> out = new LinkedHashSet<>();
        for (String n : names) {
            for (String c : set.closure(n)) {
                out.addAll(resources(set.bundles(c)));
            }
        }
        return out;
    }

    private static final Map<String, Resource> PARSED = new HashMap<>();

    private static List<Resource> resources(List<ID> ids) throws Exception {
        List<Resource> out = new ArrayList<>();
        for (ID id : ids) {
            String file = FeatureSet.fileName(id);
            Path jar = jars.get(file);
            if (jar == null) {
                fail("feature bundle " + id + " (" + file + ") is not a dependency of the features module");
            }
            out.add(resource(jar));
        }
        return out;
    }

    private static Resource resource(Path jar) throws Exception {
        synchronized (PARSED) {
            Resource r = PARSED.get(jar.toString());
            if (r == null) {
                r = ResourceBuilder.parse(jar.toFile(), jar.toUri());
                PARSED.put(jar.toString(), r);
            }
            return r;
        }
    }

    /** Resolves {@code roots} with nothing but {@code available} and the framework. */
    private static Map<Resource, List<Wire>> resolve(List<Resource> roots, Set<Resource> available) throws Exception {
        List<Resource> repo = new ArrayList<>(available);
        repo.add(framework);
        try (ResolverLogger logger = new ResolverLogger(ResolverLogger.LOG_ERROR)) {
            GenericResolveContext ctx = new GenericResolveContext(logger);
            ctx.addRepository(new ResourcesRepository(repo));
            ctx.addFramework("org.apache.felix.framework", null);
            ctx.addEE(EE.JavaSE_17);
            ctx.addEffectiveDirective("active");
            for (Resource r : roots) {
                var identity = ResourceUtils.getIdentityCapability(r);
                ctx.getInput().addRequirement(AbstractResolveContext.createIdentityRequirement(identity.osgi_identity(),
                        "[" + identity.version() + "," + identity.version() + "]"));
            }
            ctx.done();
            return new BndResolver(logger).resolve(ctx);
        }
    }
}
