package dev.strata.feature.commands.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.apache.felix.feature.impl.FeatureServiceImpl;
import org.apache.felix.service.command.Descriptor;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleException;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceManager;
import dev.strata.features.FeatureSet;

/**
 * {@code feature:list|install|uninstall}. The descriptors are read afresh by each command (a
 * descriptor dropped into the directory counts at once) from framework property
 * {@value #FEATURES} (default {@code ${strata.home}/features}); missing bundles come from
 * {@value #REPOSITORY} (default {@code ${strata.home}/repository}). Bad input gets one line and
 * changes nothing.
 */
@Component(service = FeatureCommands.class, property = {"osgi.command.scope=feature",
        "osgi.command.function=list", "osgi.command.function=install", "osgi.command.function=uninstall"})
public final class FeatureCommands {

    static final String FEATURES = "strata.features.dir";
    static final String REPOSITORY = "strata.repository.dir";

    @Reference
    DeviceManager manager;

    private BundleContext context;

    @Activate
    void activate(BundleContext context) {
        this.context = context;
    }

    private Path dir(String property, String under) {
        String v = context.getProperty(property);
        if (v != null && !v.isBlank()) {
            return Path.of(v);
        }
        String home = context.getProperty("strata.home");
        return Path.of(home == null ? "." : home).resolve(under);
    }

    private FeatureBundles bundles() throws IOException {
        Path features = dir(FEATURES, "features");
        if (!Files.isDirectory(features)) {
            throw new IOException("no feature descriptors: " + features + " is not a directory (set " + FEATURES + ")");
        }
        FeatureSet set;
        try {
            set = FeatureSet.read(features, new FeatureServiceImpl());
        } catch (IllegalArgumentException e) {
            throw new IOException(e.getMessage(), e);
        }
        return new FeatureBundles(context, set, dir(REPOSITORY, "repository"));
    }

    @Descriptor("list the features and whether each is installed")
    public String list() {
        try {
            FeatureBundles fb = bundles();
            StringBuilder out = new StringBuilder();
            for (String name : fb.set().names()) {
                String state = switch (fb.state(name)) {
                    case INSTALLED -> "installed";
                    case PARTIAL -> "partly installed";
                    case NOT_INSTALLED -> "not installed";
                };
                out.append(String.format("%-18s %-16s %s%n", name, state, fb.set().feature(name).getName().orElse("")));
            }
            return out.toString();
        } catch (IOException e) {
            return "feature:list: " + e.getMessage();
        }
    }

    @Descriptor("install a feature and the features it needs")
    public String install() {
        return "usage: feature:install NAME… (see feature:list)";
    }

    @Descriptor("install features and the features they need")
    public String install(@Descriptor("feature names") String... names) {
        try {
            FeatureBundles fb = bundles();
            String unknown = unknown(fb, names);
            if (unknown != null) {
                return "feature:install: " + unknown;
            }
            // a needed feature that is up at all counts as there: a host may bring part of a
            // platform feature itself (its own logging instead of logback, say)
            List<String> closure = new ArrayList<>();
            for (String n : names) {
                for (String c : fb.set().closure(n)) {
                    boolean wanted = c.equals(n) || fb.state(c) == FeatureBundles.State.NOT_INSTALLED;
                    if (wanted && !closure.contains(c)) {
                        closure.add(c);
                    }
                }
            }
            List<String> missing = fb.missingJars(closure);
            if (!missing.isEmpty()) {
                return "feature:install: not in the repository " + dir(REPOSITORY, "repository") + ": " + String.join(", ", missing);
            }
            fb.install(closure);
            return "installed " + String.join(", ", closure.stream().filter(c -> List.of(names).contains(c)).toList())
                    + (closure.size() > names.length ? " (with " + String.join(", ", closure.stream().filter(c -> !List.of(names).contains(c)).toList()) + ")" : "");
        } catch (IOException | BundleException e) {
            return "feature:install: " + e.getMessage() + "; nothing was changed";
        }
    }

    @Descriptor("uninstall a feature (refused while devices use its target types or installed features need it)")
    public String uninstall() {
        return "usage: feature:uninstall NAME (see feature:list)";
    }

    @Descriptor("uninstall a feature (refused while devices use its target types or installed features need it)")
    public String uninstall(@Descriptor("feature name") String name) {
        try {
            FeatureBundles fb = bundles();
            String unknown = unknown(fb, name);
            if (unknown != null) {
                return "feature:uninstall: " + unknown;
            }
            if (fb.state(name) == FeatureBundles.State.NOT_INSTALLED) {
                return "feature:uninstall: " + name + " is not installed";
            }
            if (fb.holdsCommands(name)) {
                return "feature:uninstall: " + name + " holds the feature: commands themselves; stop the framework instead";
            }
            List<String> dependents = fb.dependents(name);
            if (!dependents.isEmpty()) {
                return "feature:uninstall: " + name + " is needed by installed " + String.join(", ", dependents) + "; uninstall those first";
            }
            Set<String> types = fb.targetTypes(name);
            List<String> users = new ArrayList<>();
            for (DeviceInfo d : manager.list()) {
                if (types.contains(d.type())) {
                    users.add(d.name() + " (" + d.type() + ")");
                }
            }
            if (!users.isEmpty()) {
                return "feature:uninstall: " + name + " is in use by devices " + String.join(", ", users) + "; remove them first";
            }
            fb.stop(name);
            return "uninstalled " + name;
        } catch (IOException | BundleException e) {
            return "feature:uninstall: " + e.getMessage();
        }
    }

    private static String unknown(FeatureBundles fb, String... names) {
        for (String n : names) {
            if (!fb.set().names().contains(n)) {
                return "no feature " + n + " (features: " + String.join(", ", fb.set().names()) + ")";
            }
        }
        return null;
    }
}
