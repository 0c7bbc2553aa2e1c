package dev.strata.mirror.internal.log;

import java.io.IOException;
import java.util.BitSet;
import java.util.Map;

/**
 * Where a mirror keeps which regions may differ between its legs, and which legs are in sync.
 * Every call that changes the log is one durable round trip (counted by {@link #roundTrips()}):
 * {@link #commit} carries any number of marks and clears at once, which is what makes the
 * integrated flush possible. {@link #commit} and {@link #writeLegState} are made by one thread at a
 * time (the region tracker's committer); a cluster log ({@code zookeeper:}) also works from the
 * mirror's daemon ({@link #maintain}) and locks for itself. The defaults are a single node's.
 */
public interface RegionLog {

    /** {@code core}, {@code disk:DEV} or {@code zookeeper:…}, for status. */
    String describe();

    /** Whether the log survives a restart (a {@code core} log does not: everything is resynced). */
    boolean persistent();

    /**
     * Reads (or, for a blank device, formats) the log for the given geometry. A new log starts with
     * every region dirty when {@code syncNew} (the legs are copied once), else with none.
     *
     * @throws dev.strata.api.InvalidArgumentException if the device holds another geometry or
     *         something that is not a mirror log; nothing is written then
     */
    Opened open(int legs, long regionSize, long regions, boolean syncNew) throws IOException;

    /** Makes {@code marks} set and {@code clears} unset durably, in one round trip. */
    void commit(BitSet marks, BitSet clears) throws IOException;

    /** Makes the in-sync mask durable (bit i = leg i in sync), in one round trip. */
    void writeLegState(int inSyncMask) throws IOException;

    /**
     * The naive log's flush request, a round trip of its own that carries nothing new: the seed's
     * dm-log-userspace sent {@code mark_region}, {@code clear_region} and {@code flush} as
     * separate cluster requests ("two or three round trips per flush"). Only the bench switch
     * {@code integrated_flush=false} calls it, after a commit of marks; counted in
     * {@link #roundTrips()}.
     */
    default void flushRequest() throws IOException {
    }

    /** Durable round trips so far. */
    long roundTrips();

    /**
     * Returns when this node may write to the legs: a cluster node that lost its session waits
     * (until it has rejoined) or fails after a bounded time, so it never writes while another node
     * may be taking its marks over.
     */
    default void awaitWritable() throws IOException {
    }

    /** Background work of the log (the daemon calls it every round): rejoin, recover dead nodes. */
    default void maintain() throws IOException {
    }

    /**
     * Regions this node must resync that it did not know of at open (a dead node's marks it took
     * over, or its own after another node took them over); they are durably this node's marks.
     * Each region is returned once; the log ignores clears of them until
     * {@link #resyncWorkAdopted} says the tracker holds them.
     */
    default BitSet takeResyncWork() {
        return new BitSet();
    }

    /** The tracker holds {@code regions} (from {@link #takeResyncWork}) as marks it will not clear before their resync. */
    default void resyncWorkAdopted(BitSet regions) {
    }

    /** The resync has queued {@code regions} (from {@link #takeResyncWork}): its own counts include them now. */
    default void resyncWorkQueued(BitSet regions) {
    }

    /**
     * Regions this node must resync that the resync has not queued yet: taken over but not yet
     * returned by {@link #takeResyncWork}, or returned and not yet {@link #resyncWorkQueued
     * queued}. The status counts them as pending, so that a node that has just taken another
     * one over never reads as having nothing left to copy.
     */
    default int resyncWorkWaiting() {
        return 0;
    }

    /**
     * A cluster log's leg state as the nodes share it (the latest seen; a watch keeps it fresh),
     * or {@code null} for a single node's log, whose leg state is this mirror's alone.
     */
    default LegShare sharedLegs() {
        return null;
    }

    /**
     * Cluster logs: starts a recovery of {@code leg} for every node (it joins the recovering legs
     * under a new epoch); the leg is in sync again for all once every live node has copied its
     * own marks to it and said so ({@link #recoveryCopied}).
     */
    default void startRecovery(int leg) throws IOException {
    }

    /** Cluster logs: this node has copied its marks to the legs recovering in {@code epoch}, durably. */
    default void recoveryCopied(long epoch) throws IOException {
    }

    /** Cluster logs: the epoch this node last said it copied its marks for (-1: none since it joined). */
    default long recoveryCopiedEpoch() {
        return -1;
    }

    /**
     * Cluster logs: where this node holds back its writes to the regions other nodes are
     * resyncing ({@link RemoteGate}); set once, right after {@link #open}.
     */
    default void remoteGate(RemoteGate gate) {
    }

    /**
     * Whether this node's resync may copy regions {@code needed} now. A cluster log first makes
     * them known to every other live node and returns true only once each holds its writes to
     * them back (or is gone and fenced); it never waits for another node: false means "not yet,
     * ask again". A single node's log: always.
     */
    default boolean resyncMayCopy(BitSet needed) throws IOException {
        return true;
    }

    /** This node's resync copied regions: {@code stillNeeded} is what it has left; the others' writes to the rest may go on. */
    default void resyncProgress(BitSet stillNeeded) throws IOException {
    }

    /**
     * A node's side of the other nodes' resyncs (dm-raid1's {@code is_remote_recovering}): writes
     * to held-back regions wait; {@link #drained} says whether a write to any is still in flight.
     */
    interface RemoteGate {
        /** From now on writes to {@code regions} wait (regions held back before and not in it may go on). */
        void holdBack(BitSet regions);

        /** Whether no write to any of {@code regions} is in flight. */
        boolean drained(BitSet regions);

        /** From now on reads of {@code regions} (not in sync in the cluster) go to the resync source only. */
        default void readFromSource(BitSet regions) {
        }
    }

    /**
     * The leg state the nodes of a cluster share: the legs in sync, the legs being recovered
     * (every node copies its own marks to them), and the recovery's epoch.
     */
    record LegShare(int inSync, int recovering, long epoch) {
    }

    /** Extra status keys of the log. */
    default Map<String, String> status() {
        return Map.of();
    }

    /** Releases the log's connections; called last by the mirror's close. */
    default void close() throws IOException {
    }

    /**
     * What the log held at open: the dirty regions, the in-sync legs, and whether it was new
     * (nothing known: the legs may differ anywhere).
     */
    record Opened(BitSet dirty, int inSyncMask, boolean fresh) {
    }
}
