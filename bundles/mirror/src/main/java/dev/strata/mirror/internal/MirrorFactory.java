package dev.strata.mirror.internal;

import dev.strata.api.BlockDevice;
import dev.strata.api.Claim;
import dev.strata.api.Target;
import dev.strata.api.TargetContext;
import dev.strata.api.TargetFactory;
import dev.strata.mirror.internal.format.LogHeader;
import dev.strata.mirror.internal.io.MirrorSettings;
import dev.strata.mirror.internal.io.MirrorTarget;
import dev.strata.mirror.internal.io.RemoteLegs;
import dev.strata.mirror.internal.log.CoreLog;
import dev.strata.mirror.internal.log.DiskLog;
import dev.strata.mirror.internal.log.RegionLog;
import dev.strata.mirror.internal.log.zk.ZkLogConfig;
import dev.strata.mirror.internal.log.zk.ZooKeeperLog;
import java.io.IOException;
import java.net.InetAddress;
import java.util.Objects;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Deactivate;

/** Builds {@code mirror} targets; every leg and the log device are claimed exclusively. */
@Component(service = TargetFactory.class, property = TargetFactory.TYPE + "=" + MirrorSettings.TYPE)
public class MirrorFactory implements TargetFactory {

    /**
     * To look up the device manager when a leg fails, to tell remote legs ({@code nbd}) from
     * local ones. Not a DS reference: the manager references every target factory, so a reference
     * back makes a cycle SCR reports at every start.
     */
    private volatile BundleContext context;

    @Activate
    void activate(BundleContext bundleContext) {
        this.context = bundleContext;
    }

    @Deactivate
    void deactivate() {
        this.context = null;
    }

    @Override
    public String usage() {
        return MirrorSettings.USAGE;
    }

    @Override
    public List<String> lowerDevices(Map<String, String> arguments) {
        return MirrorSettings.parse(arguments).lowerDevices();
    }

    @Override
    public Map<String, Claim> claims(Map<String, String> arguments) {
        Map<String, Claim> m = new LinkedHashMap<>();
        for (String d : lowerDevices(arguments)) {
            m.put(d, Claim.EXCLUSIVE);
        }
        return m;
    }

    /** A reload over the same legs and log keeps the log (and so its dirty regions). */
    @Override
    public boolean adopts(String oldType, Map<String, String> oldArguments, Map<String, String> newArguments) {
        if (!MirrorSettings.TYPE.equals(oldType)) {
            return false;
        }
        MirrorSettings a = MirrorSettings.parse(oldArguments);
        MirrorSettings b = MirrorSettings.parse(newArguments);
        return a.legs().equals(b.legs()) && a.regionSize() == b.regionSize() && !a.coreLog()
                && Objects.equals(a.logDevice(), b.logDevice()) && Objects.equals(a.zookeeper(), b.zookeeper());
    }

    @Override
    public Target create(TargetContext context) throws IOException {
        MirrorSettings s = MirrorSettings.parse(context.arguments());
        List<BlockDevice> legs = new ArrayList<>();
        for (String l : s.legs()) {
            legs.add(context.lowerDevice(l));
        }
        List<String> ids = new ArrayList<>();
        for (String l : s.legs()) {
            ids.add(context.lowerDeviceId(l));
        }
        RegionLog log;
        if (s.zookeeper() != null) {
            ZkLogConfig zk = s.zookeeper().node() != null ? s.zookeeper() : s.zookeeper().withNode(hostName());
            // 0: no leg identity check. Each node of a cluster defines its own leg devices, and its
            // manager stamps them with identities of its own, so another node's legs_id never
            // matched and every node but the first was refused (found by ClusterIT); the
            // geometry is still checked
            log = new ZooKeeperLog(zk, 0);
        } else if (s.coreLog()) {
            log = new CoreLog();
        } else {
            log = new DiskLog(s.logDevice(), context.lowerDevice(s.logDevice()), LogHeader.legsId(ids));
        }
        MirrorTarget m = MirrorTarget.open(context.deviceName(), s.legs(), legs, log, s.regionSize(), s.options());
        BundleContext c = this.context;
        if (c != null) {
            m.autoRecover(RemoteLegs.lookup(c, s.legs()), RemoteLegs.PROBE_INTERVAL_MS);
        }
        return m;
    }

    /** A cluster node's default name: the host's, reduced to the characters a znode name allows here. */
    static String hostName() {
        String h;
        try {
            h = InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            h = "localhost";
        }
        String n = h.replaceAll("[^A-Za-z0-9._-]", "_");
        return n.isEmpty() || n.equals(".") || n.equals("..") ? "node" : n;
    }
}
