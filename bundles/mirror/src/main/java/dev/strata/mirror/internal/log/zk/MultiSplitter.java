package dev.strata.mirror.internal.log.zk;

import java.util.ArrayList;
import java.util.List;
import org.apache.zookeeper.Op;

/**
 * Splits the operations of one commit into as few {@code multi()} requests as fit ZooKeeper's
 * request size limit ({@code jute.maxbuffer}, 1 MiB less a little by default: a bigger request
 * makes the server drop the connection, which a client would retry forever). Each request starts
 * with the same fencing {@code check}, so none is applied for a node that lost its membership.
 */
final class MultiSplitter {
    /** Payload per request: half of jute.maxbuffer's default leaves room for the framing. */
    static final int DEFAULT_BUDGET = 512 * 1024;
    /** What a request costs beyond paths and data (header, per-op framing, ACLs of creates). */
    static final int OP_OVERHEAD = 64;

    /** An operation and the bytes it adds to a request. */
    record Sized(Op op, int bytes) {
        static Sized of(Op op, int dataBytes) {
            return new Sized(op, op.getPath().length() + dataBytes + OP_OVERHEAD);
        }
    }

    private MultiSplitter() {
    }

    static List<List<Op>> split(Sized check, List<Sized> ops, int budget) {
        return split(List.of(check), ops, budget);
    }

    /** As {@link #split(Sized, List, int)}, each request starting with every one of {@code checks}. */
    static List<List<Op>> split(List<Sized> checks, List<Sized> ops, int budget) {
        List<List<Op>> out = new ArrayList<>();
        List<Op> cur = null;
        int used = 0;
        for (Sized s : ops) {
            if (cur == null || (used + s.bytes() > budget && cur.size() > checks.size())) {
                cur = new ArrayList<>();
                used = 0;
                for (Sized c : checks) {
                    cur.add(c.op());
                    used += c.bytes();
                }
                out.add(cur);
            }
            cur.add(s.op());
            used += s.bytes();
        }
        return out;
    }
}
