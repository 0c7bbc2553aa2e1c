package dev.strata.feature.commands.internal;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleException;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.wiring.BundleRevision;

import dev.strata.api.TargetFactory;
import dev.strata.features.FeatureSet;
import org.osgi.service.feature.ID;

/**
 * A feature set against the running framework: which features are up, and bringing a feature's
 * bundles up or down.
 *
 * <p>"Uninstall" stops the feature's bundles rather than removing them from the framework: the
 * distribution's launcher puts back any bundle of {@code bundle/} that leaves the framework (so a
 * FileInstall undeploy cannot lose a shipped target type), while it leaves a stopped one alone; and
 * a stopped bundle takes its services (the target types) away just the same. Install starts a
 * feature's bundles that are there, and installs the missing ones from the repository directory.
 */
final class FeatureBundles {

    enum State { INSTALLED, PARTIAL, NOT_INSTALLED }

    private final BundleContext context;
    private final FeatureSet set;
    private final Path repository;

    FeatureBundles(BundleContext context, FeatureSet set, Path repository) {
        this.context = context;
        this.set = set;
        this.repository = repository;
    }

    FeatureSet set() {
        return set;
    }

    /** The framework's bundle for a feature's bundle id: by file name of its location, Maven URL or symbolic name. */
    Optional<Bundle> find(ID id) {
        String file = FeatureSet.fileName(id);
        String mvn = id.getGroupId() + "/" + id.getArtifactId() + "/";
        for (Bundle b : context.getBundles()) {
            String loc = b.getLocation();
            if (loc.endsWith("/" + file) || loc.contains(mvn) || id.getArtifactId().equals(b.getSymbolicName())) {
                return Optional.of(b);
            }
        }
        return Optional.empty();
    }

    /**
     * Fragments, and the bundles the launcher never starts, are up when resolved: the libraries of
     * strata.start.never (gogo.jline), and in the console (strata.console=true) those of
     * strata.start.never.interactive (gogo.shell, which would read the terminal too; without this
     * the console's feature:list said strata-runtime was "partly installed").
     */
    boolean up(Bundle b) {
        if ("true".equals(context.getProperty("strata.console")) && listed("strata.start.never.interactive", b)) {
            // installed and never started: nothing imports it, so the framework leaves it unresolved
            return b.getState() == Bundle.INSTALLED || b.getState() == Bundle.RESOLVED;
        }
        boolean library = listed("strata.start.never", b);
        if (library || (b.adapt(BundleRevision.class).getTypes() & BundleRevision.TYPE_FRAGMENT) != 0) {
            return b.getState() == Bundle.RESOLVED;
        }
        return b.getState() == Bundle.ACTIVE || b.getState() == Bundle.STARTING;
    }

    private boolean listed(String property, Bundle b) {
        String names = context.getProperty(property);
        return names != null && List.of(names.trim().split("\\s*,\\s*")).contains(b.getSymbolicName());
    }

    /**
     * Installed: every bundle up. Not installed: none up but those another installed feature also
     * names (the cache: commands stay up for writeboost when writecache is uninstalled).
     */
    State state(String feature) {
        if (allUp(feature)) {
            return State.INSTALLED;
        }
        Set<ID> others = new LinkedHashSet<>();
        for (String f : set.names()) {
            if (!f.equals(feature) && allUp(f)) {
                others.addAll(set.bundles(f));
            }
        }
        for (ID id : set.bundles(feature)) {
            if (!others.contains(id) && find(id).filter(this::up).isPresent()) {
                return State.PARTIAL;
            }
        }
        return State.NOT_INSTALLED;
    }

    private boolean allUp(String feature) {
        for (ID id : set.bundles(feature)) {
            if (find(id).filter(this::up).isEmpty()) {
                return false;
            }
        }
        return true;
    }

    /** The installed features that name {@code feature} as needed. */
    List<String> dependents(String feature) {
        List<String> out = new ArrayList<>();
        for (String f : set.names()) {
            if (!f.equals(feature) && set.requires(f).contains(feature) && state(f) != State.NOT_INSTALLED) {
                out.add(f);
            }
        }
        return out;
    }

    /** The target types the feature's bundles register now. */
    Set<String> targetTypes(String feature) {
        Set<String> out = new LinkedHashSet<>();
        for (ID id : set.bundles(feature)) {
            Optional<Bundle> b = find(id);
            ServiceReference<?>[] refs = b.map(Bundle::getRegisteredServices).orElse(null);
            if (refs == null) {
                continue;
            }
            for (ServiceReference<?> r : refs) {
                Object type = r.getProperty(TargetFactory.TYPE);
                if (type instanceof String s && r.getProperty("objectClass") instanceof String[] classes
                        && List.of(classes).contains(TargetFactory.class.getName())) {
                    out.add(s);
                }
            }
        }
        return out;
    }

    /** True if this bundle (the one running the commands) belongs to the feature. */
    boolean holdsCommands(String feature) {
        return set.bundles(feature).stream().map(this::find)
                .anyMatch(b -> b.isPresent() && b.get().getBundleId() == context.getBundle().getBundleId());
    }

    /** The repository jars the closure needs that are neither in the framework nor in the repository. */
    List<String> missingJars(List<String> closure) {
        List<String> out = new ArrayList<>();
        for (String f : closure) {
            for (ID id : set.bundles(f)) {
                if (find(id).isEmpty() && !Files.isRegularFile(repository.resolve(FeatureSet.fileName(id)))) {
                    out.add(FeatureSet.fileName(id));
                }
            }
        }
        return out;
    }

    /**
     * Brings up every bundle of the closure (needed features first): installs the missing ones
     * from the repository, then starts all. If one fails to start, what this call installed is
     * removed again and what it started is stopped, so a failed install leaves things as they were.
     */
    void install(List<String> closure) throws BundleException {
        List<Bundle> installed = new ArrayList<>();
        List<Bundle> started = new ArrayList<>();
        try {
            List<Bundle> all = new ArrayList<>();
            for (String f : closure) {
                for (ID id : set.bundles(f)) {
                    Optional<Bundle> b = find(id);
                    if (b.isEmpty()) {
                        Bundle nb = context.installBundle(repository.resolve(FeatureSet.fileName(id)).toUri().toString());
                        installed.add(nb);
                        all.add(nb);
                    } else if (!all.contains(b.get())) {
                        all.add(b.get());
                    }
                }
            }
            for (Bundle b : all) {
                if (!up(b)) {
                    b.start();
                    started.add(b);
                }
            }
        } catch (BundleException | RuntimeException e) {
            for (Bundle b : started) {
                stopQuietly(b);
            }
            for (Bundle b : installed) {
                try {
                    b.uninstall();
                } catch (BundleException | IllegalStateException ignored) {
                    // already gone: nothing left to undo
                }
            }
            throw e;
        }
    }

    /** Stops the feature's bundles that no other installed feature also names; returns their names. */
    List<String> stop(String feature) throws BundleException {
        Set<ID> shared = new LinkedHashSet<>();
        for (String f : set.names()) {
            if (!f.equals(feature) && allUp(f)) {
                shared.addAll(set.bundles(f));
            }
        }
        List<String> out = new ArrayList<>();
        for (ID id : set.bundles(feature)) {
            Optional<Bundle> b = find(id);
            if (b.isPresent() && !shared.contains(id) && b.get().getState() == Bundle.ACTIVE) {
                b.get().stop();
                out.add(b.get().getSymbolicName());
            }
        }
        return out;
    }

    private static void stopQuietly(Bundle b) {
        try {
            b.stop();
        } catch (BundleException | IllegalStateException ignored) {
            // the undo is best effort; the error that caused it is what the caller reports
        }
    }
}
