package dev.strata.readcache.policies.internal;

import dev.strata.api.ReadCachePolicy.Contents;
import dev.strata.api.ReadCachePolicy.Instance;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One cache's W-TinyLFU state (Einziger, Friedman and Manes, "TinyLFU: A Highly Efficient Cache
 * Admission Policy", ACM TOS 2017; Caffeine's {@code BoundedLocalCache}), 17 bytes per slot:
 * {@link LinkedSlots} (9) and the {@link FrequencySketch} (8).
 * <ul>
 * <li>A miss is counted in the sketch. With a free slot it is promoted into it. With none, the
 * window's least recently used block (the <em>candidate</em>) would have to leave the window,
 * and the main region must then give up a block: the candidate is compared with the probation
 * segment's least recently used block (the <em>victim</em>); the one with the higher estimated
 * frequency stays (ties keep the victim, so a scan of blocks seen once cannot displace the main
 * region), and the loser's slot receives the new block, which enters the window. With
 * {@code window=0} the new block itself is the candidate: it is promoted only if it beats the
 * victim, otherwise rejected (TinyLFU admission at the door, no write to the cache device).
 * <li>A hit is counted; in the window it refreshes recency, in probation it moves the block to
 * protected (whose oldest block falls back to probation when protected is over its share), in
 * protected it refreshes recency.
 * <li>The hill climber (Caffeine's; off unless {@code climb=true}): every
 * {@code climb_sample × slots} accesses it compares the hit
 * ratio with the previous sample's and moves the window's size a step in the direction that
 * helped (6.25 % of the slots, decaying by 2 % a step; restarting when the ratio moves by 5
 * points). Blocks move between regions at most {@value #TRANSFER_LIMIT} per call, so no call
 * costs more than a bounded amount of work.
 * <li>A candidate with a frequency of {@value #HASHDOS_THRESHOLD} or more that loses is still
 * admitted once in 128 times (Caffeine's guard against an attacker pinning a victim's counter
 * with colliding keys); the random numbers come from a seeded generator, so runs repeat exactly.
 * </ul>
 */
final class WTinyLfu implements Instance {
    private static final int FREE = 0;
    private static final int WINDOW = 1;
    private static final int PROBATION = 2;
    private static final int PROTECTED = 3;
    private static final String[] REGION = {"free", "window", "probation", "protected"};

    static final int HASHDOS_THRESHOLD = 6;
    static final int TRANSFER_LIMIT = 64;
    private static final double RESTART_THRESHOLD = 0.05;
    private static final double STEP_PERCENT = 0.0625;
    private static final double STEP_DECAY = 0.98;

    /**
     * Tunables: window as % of the slots, climbing on or off, protected as % of the main region,
     * sketch aging period in accesses per slot.
     */
    record Settings(int windowPercent, boolean climb, int protectedPercent, int sampleFactor, int climbFactor) {
        /**
         * Caffeine's window (1 %) and protected share (80 %); aging every 20 accesses per slot
         * (Caffeine: 10) and no climbing (Caffeine: on), measured better on the ARC traces
         * (docs/benchmarks.md): with Caffeine's two, 1 % of P6 falls below ARC.
         */
        static final Settings DEFAULT = new Settings(1, false, 80, 20, 10);
    }

    private final Contents contents;
    private final Settings settings;
    private final int slots;
    private final LinkedSlots lists;
    private final FrequencySketch sketch;
    private final long climbSample;
    private int windowMax;
    private int protectedMax;

    private double stepSize;
    private double previousHitRate;
    private long hitsInSample;
    private long missesInSample;
    /** Blocks still to move into (> 0) or out of (< 0) the window, as the climber decided. */
    private long adjustment;
    private int random = 0x9E3779B9;

    private long promotions;
    private long rejections;
    private long evictions;
    private long candidatesAdmitted;
    private long climbs;

    WTinyLfu(Contents contents, Settings settings) {
        this.contents = contents;
        this.settings = settings;
        slots = contents.slots();
        lists = new LinkedSlots(slots, 4);
        sketch = new FrequencySketch(slots, settings.sampleFactor());
        climbSample = (long) settings.climbFactor() * slots;
        windowMax = settings.windowPercent() == 0 ? 0
                : (int) Math.max(1, Math.min(slots, Math.round(slots * settings.windowPercent() / 100.0)));
        protectedMax = (int) ((long) (slots - windowMax) * settings.protectedPercent() / 100);
        stepSize = -STEP_PERCENT * slots;
        // Rebuild: no history survives a switch, so every cached block starts on probation (the
        // first to go if nothing proves it hot) and every other slot is free.
        for (int s = 0; s < slots; s++) {
            lists.addLast(contents.keyAt(s) == Contents.EMPTY ? FREE : PROBATION, s);
        }
    }

    @Override
    public int onMiss(long key) {
        sketch.increment(key);
        missesInSample++;
        climb();
        int s = lists.pollFirst(FREE);
        if (s != LinkedSlots.NONE) {
            promotions++;
            return s;
        }
        int victim = lists.first(PROBATION);
        if (victim == LinkedSlots.NONE) {
            victim = lists.first(PROTECTED);
        }
        int candidate = windowMax > 0 ? lists.first(WINDOW) : LinkedSlots.NONE;
        if (candidate != LinkedSlots.NONE) {
            evictions++;
            promotions++;
            if (victim != LinkedSlots.NONE && admit(contents.keyAt(candidate), contents.keyAt(victim))) {
                candidatesAdmitted++;
                lists.unlink(victim);
                lists.moveToLast(PROBATION, candidate);
                return victim;
            }
            lists.unlink(candidate);
            return candidate;
        }
        if (victim != LinkedSlots.NONE && admit(key, contents.keyAt(victim))) {
            evictions++;
            promotions++;
            lists.unlink(victim);
            return victim;
        }
        rejections++;
        return REJECT;
    }

    @Override
    public void onHit(int slot) {
        sketch.increment(contents.keyAt(slot));
        hitsInSample++;
        switch (lists.listOf(slot)) {
            case WINDOW -> lists.moveToLast(WINDOW, slot);
            case PROBATION -> {
                lists.moveToLast(PROTECTED, slot);
                demoteFromProtected();
            }
            case PROTECTED -> lists.moveToLast(PROTECTED, slot);
            default -> throw new IllegalStateException("hit on slot " + slot + ", which is "
                    + (lists.listOf(slot) == LinkedSlots.OFF ? "pending" : REGION[lists.listOf(slot)]));
        }
        climb();
    }

    @Override
    public void onInsert(int slot, long key) {
        if (windowMax == 0) {
            lists.addLast(PROBATION, slot);
            return;
        }
        lists.addLast(WINDOW, slot);
        // While the cache fills (free slots, nothing evicted) the window's overflow moves on to
        // probation, as in Caffeine.
        while (lists.size(WINDOW) > windowMax) {
            lists.moveToLast(PROBATION, lists.first(WINDOW));
        }
    }

    @Override
    public void onRemove(int slot) {
        if (lists.listOf(slot) != LinkedSlots.OFF) {
            lists.unlink(slot);
        }
        lists.addLast(FREE, slot);
    }

    /** Caffeine's {@code admit}: does the candidate displace the victim? */
    private boolean admit(long candidateKey, long victimKey) {
        int victimFreq = sketch.frequency(victimKey);
        int candidateFreq = sketch.frequency(candidateKey);
        if (candidateFreq > victimFreq) {
            return true;
        }
        if (candidateFreq >= HASHDOS_THRESHOLD) {
            random ^= random << 13;
            random ^= random >>> 17;
            random ^= random << 5;
            return (random & 127) == 0;
        }
        return false;
    }

    private void demoteFromProtected() {
        while (lists.size(PROTECTED) > protectedMax) {
            lists.moveToLast(PROBATION, lists.first(PROTECTED));
        }
    }

    /** Caffeine's {@code climb}: a new adjustment once per sample, and a bounded part of it now. */
    private void climb() {
        if (!settings.climb() || settings.windowPercent() == 0) {
            return;
        }
        long requests = hitsInSample + missesInSample;
        if (requests >= climbSample) {
            double hitRate = (double) hitsInSample / requests;
            double change = hitRate - previousHitRate;
            double amount = change >= 0 ? stepSize : -stepSize;
            stepSize = Math.abs(change) >= RESTART_THRESHOLD
                    ? STEP_PERCENT * slots * (amount >= 0 ? 1 : -1)
                    : STEP_DECAY * amount;
            previousHitRate = hitRate;
            hitsInSample = 0;
            missesInSample = 0;
            adjustment = (long) amount;
            climbs++;
        }
        if (adjustment > 0) {
            increaseWindow();
        } else if (adjustment < 0) {
            decreaseWindow();
        }
    }

    /** Moves up to {@link #TRANSFER_LIMIT} blocks of the adjustment from main into the window. */
    private void increaseWindow() {
        int quota = (int) Math.min(Math.min(adjustment, protectedMax), TRANSFER_LIMIT);
        if (quota == 0) {
            adjustment = 0;
            return;
        }
        protectedMax -= quota;
        windowMax += quota;
        demoteFromProtected();
        int moved = 0;
        while (moved < quota) {
            int c = lists.first(PROBATION);
            if (c == LinkedSlots.NONE) {
                c = lists.first(PROTECTED);
            }
            if (c == LinkedSlots.NONE) {
                break;
            }
            lists.moveToLast(WINDOW, c);
            moved++;
        }
        // Quota not used (main ran out of blocks while filling) stays with main.
        protectedMax += quota - moved;
        windowMax -= quota - moved;
        adjustment = moved == quota ? adjustment - quota : 0;
    }

    /** Moves up to {@link #TRANSFER_LIMIT} blocks of the adjustment from the window to probation. */
    private void decreaseWindow() {
        int quota = (int) Math.min(Math.min(-adjustment, Math.max(0, windowMax - 1)), TRANSFER_LIMIT);
        if (quota == 0) {
            adjustment = 0;
            return;
        }
        protectedMax += quota;
        windowMax -= quota;
        int moved = 0;
        while (moved < quota) {
            int c = lists.first(WINDOW);
            if (c == LinkedSlots.NONE) {
                break;
            }
            lists.moveToLast(PROBATION, c);
            moved++;
        }
        // Quota not used (the window held fewer blocks than its share) stays with the window.
        protectedMax -= quota - moved;
        windowMax += quota - moved;
        adjustment = moved == quota ? adjustment + quota : 0;
    }

    @Override
    public boolean set(String key, String value) {
        // The region sizes and the sketch are laid out at open: changing them means reopening
        // the policy over the same contents (a switch keeps every cached block).
        return false;
    }

    @Override
    public Map<String, String> status() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("policy", WTinyLfuPolicy.NAME);
        m.put("window", Integer.toString(settings.windowPercent()));
        m.put("climb", Boolean.toString(settings.climb()));
        m.put("protected", Integer.toString(settings.protectedPercent()));
        m.put("sample", Integer.toString(settings.sampleFactor()));
        m.put("climb_sample", Integer.toString(settings.climbFactor()));
        m.put("window_max", Integer.toString(windowMax));
        m.put("protected_max", Integer.toString(protectedMax));
        for (int l = FREE; l <= PROTECTED; l++) {
            m.put(REGION[l], Integer.toString(lists.size(l)));
        }
        m.put("promotions", Long.toString(promotions));
        m.put("rejections", Long.toString(rejections));
        m.put("evictions", Long.toString(evictions));
        m.put("candidates_admitted", Long.toString(candidatesAdmitted));
        m.put("climbs", Long.toString(climbs));
        m.put("sketch_resets", Long.toString(sketch.resets()));
        return m;
    }

    @Override
    public long heapBytes() {
        return lists.heapBytes() + sketch.heapBytes() + 128;
    }

    // For tests in this package.
    int windowMax() {
        return windowMax;
    }

    int regionOf(int slot) {
        return lists.listOf(slot);
    }

    int frequency(long key) {
        return sketch.frequency(key);
    }
}
