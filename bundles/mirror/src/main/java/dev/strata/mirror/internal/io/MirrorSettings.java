package dev.strata.mirror.internal.io;

import dev.strata.api.InvalidArgumentException;
import dev.strata.api.TargetArguments;
import dev.strata.mirror.internal.log.zk.ZkLogConfig;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The arguments of {@code mirror legs=DEV,DEV[,…] region_size=… log=core|disk:DEV|zookeeper:HOST:PORT[,…]/PATH
 * [clear_delay=MS] [read_policy=round_robin|least_loaded] [nosync=false] [node=NAME] [session_timeout=MS]
 * [zk_connect_timeout=MS]},
 * checked before anything is touched.
 */
public record MirrorSettings(List<String> legs, long regionSize, String logDevice, MirrorTarget.Options options, ZkLogConfig zookeeper) {
    public static final String TYPE = "mirror";
    public static final Set<String> ARGS = Set.of("legs", "region_size", "log", "clear_delay", "read_policy", "nosync", "node", "session_timeout",
            "zk_connect_timeout");
    public static final String USAGE = "mirror legs=DEV,DEV[,…] region_size=SIZE log=core|disk:DEV|zookeeper:HOST:PORT[,…]/PATH"
            + " [clear_delay=3000] [read_policy=round_robin|least_loaded] [nosync=false] [node=HOSTNAME] [session_timeout=10000]"
            + " [zk_connect_timeout=15000]";
    static final int MAX_LEGS = 31;
    static final long MAX_REGION = 1L << 30;

    /** Whether the log is {@code core} (memory only). */
    public boolean coreLog() {
        return logDevice == null && zookeeper == null;
    }

    /** The lower devices: the legs, then the log device if any. */
    public List<String> lowerDevices() {
        List<String> l = new ArrayList<>(legs);
        if (logDevice != null) {
            l.add(logDevice);
        }
        return l;
    }

    public static MirrorSettings parse(Map<String, String> arguments) {
        TargetArguments a = TargetArguments.of(TYPE, arguments, ARGS);
        String legList = a.string("legs");
        List<String> legs = new ArrayList<>();
        Set<String> seen = new LinkedHashSet<>();
        for (String l : legList.split(",", -1)) {
            String n = l.trim();
            if (n.isEmpty()) {
                throw new InvalidArgumentException("mirror: legs=" + legList + " has an empty name; give device names separated by commas");
            }
            if (!seen.add(n)) {
                throw new InvalidArgumentException("mirror: legs= names '" + n + "' twice; give each leg once");
            }
            legs.add(n);
        }
        if (legs.size() < 2) {
            throw new InvalidArgumentException("mirror: legs=" + legList + " names one device; a mirror needs at least two, e.g. legs=a,b");
        }
        if (legs.size() > MAX_LEGS) {
            throw new InvalidArgumentException("mirror: legs= names " + legs.size() + " devices; at most " + MAX_LEGS);
        }
        String rs = a.string("region_size");
        long regionSize = TargetArguments.parseSize("region_size", rs);
        if (regionSize < 4096 || Long.bitCount(regionSize) != 1 || regionSize > MAX_REGION) {
            throw new InvalidArgumentException("mirror: region_size=" + rs
                    + " is not a power of two multiple of 4096 up to 1G; use e.g. 64k, 512k or 4M");
        }
        String log = a.string("log");
        String logDevice;
        if (log.equals("core")) {
            logDevice = null;
        } else if (log.startsWith("disk:") && log.length() > 5) {
            logDevice = log.substring(5);
            if (legs.contains(logDevice)) {
                throw new InvalidArgumentException("mirror: log device '" + logDevice + "' is also a leg; give the log its own device");
            }
        } else if (log.startsWith(ZkLogConfig.PREFIX)) {
            logDevice = null;
        } else {
            throw new InvalidArgumentException("mirror: log=" + log + " is unknown; use log=core, log=disk:DEV or log=zookeeper:HOST:PORT/PATH");
        }
        ZkLogConfig zk = null;
        if (log.startsWith(ZkLogConfig.PREFIX)) {
            zk = ZkLogConfig.parse(log, a.has("node") ? a.string("node") : null, a.has("session_timeout") ? a.string("session_timeout") : null,
                    a.has("zk_connect_timeout") ? a.string("zk_connect_timeout") : null);
        } else {
            for (String k : List.of("node", "session_timeout", "zk_connect_timeout")) {
                if (a.has(k)) {
                    throw new InvalidArgumentException("mirror: " + k + "= is for a cluster log; use it with log=zookeeper:HOST:PORT/PATH");
                }
            }
        }
        long clearDelay = a.has("clear_delay") ? clearDelayMillis(a.string("clear_delay")) : 3000;
        String rp = a.string("read_policy", "round_robin");
        ReadPolicy policy = ReadPolicy.of(rp);
        if (policy == null) {
            throw new InvalidArgumentException("mirror: read_policy=" + rp + " is unknown; use round_robin or least_loaded");
        }
        boolean nosync = a.bool("nosync", false);
        MirrorTarget.Options o = MirrorTarget.Options.defaults().withClearDelayNanos(clearDelay * 1_000_000L)
                .withReadPolicy(policy).withNosync(nosync);
        return new MirrorSettings(List.copyOf(legs), regionSize, logDevice, o, zk);
    }

    /** {@code integrated_flush} (a bench switch, see {@code RegionTracker#integrated}). */
    static boolean integratedFlush(String v) {
        if ("true".equals(v)) {
            return true;
        }
        if ("false".equals(v)) {
            return false;
        }
        throw new InvalidArgumentException("mirror: integrated_flush=" + v + " is not a boolean; use true or false");
    }

    /** {@code write_fanout}: whether the calling thread writes every leg itself ({@code caller}) or legs run in parallel. */
    static boolean writeFanoutCaller(String v) {
        if ("caller".equals(v)) {
            return true;
        }
        if ("parallel".equals(v)) {
            return false;
        }
        throw new InvalidArgumentException("mirror: write_fanout=" + v + " is unknown; use parallel or caller");
    }

    /** {@code clear_delay} in milliseconds, 0 to one hour. */
    static long clearDelayMillis(String v) {
        long ms;
        try {
            ms = Long.parseLong(v == null ? "" : v.trim());
        } catch (NumberFormatException e) {
            throw new InvalidArgumentException("mirror: clear_delay=" + v + " is not a whole number of milliseconds");
        }
        if (ms < 0 || ms > 3_600_000) {
            throw new InvalidArgumentException("mirror: clear_delay=" + v + " is out of range; allowed 0 to 3600000 ms");
        }
        return ms;
    }
}
