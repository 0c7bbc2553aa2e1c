package dev.strata.mirror.internal.log.zk;

import java.io.IOException;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;

/** A ZooKeeper call of the log, and the outcomes {@link ZooKeeperLog#call} turns its errors into. */
interface ZkCall<T> {
    T run(ZooKeeper zk) throws KeeperException, InterruptedException;

    /** This node's session expired: the member znode is gone, rejoin. */
    final class SessionLost extends IOException {
        SessionLost() {
            super("ZooKeeper session expired");
        }
    }

    /** A version check failed or a znode is missing: this node was fenced (or a read found nothing). */
    final class Fenced extends IOException {
        Fenced(String what) {
            super(what);
        }
    }

    /** A znode to be created exists already. */
    final class Conflict extends IOException {
        Conflict(String what) {
            super(what);
        }
    }
}
