package dev.strata.readcache.policies.replay;

import java.util.Iterator;
import java.util.LinkedHashSet;

/**
 * Reference ARC, exactly as in Fig. 4 of Megiddo and Modha, "ARC: A Self-Tuning, Low Overhead
 * Replacement Cache" (USENIX FAST '03): cached lists T1 (seen once recently) and T2 (seen at
 * least twice), ghost lists B1 and B2 of keys recently evicted from them, and the target size
 * {@code p} of T1, adapted on every ghost hit. Sets in insertion order serve as LRU lists (the
 * first element is the LRU end; re-adding moves a key to the MRU end).
 */
final class Arc implements Simulator {
    private final int c;
    private double p;
    private final LinkedHashSet<Long> t1 = new LinkedHashSet<>();
    private final LinkedHashSet<Long> t2 = new LinkedHashSet<>();
    private final LinkedHashSet<Long> b1 = new LinkedHashSet<>();
    private final LinkedHashSet<Long> b2 = new LinkedHashSet<>();

    Arc(int capacity) {
        this.c = capacity;
    }

    @Override
    public boolean access(long k) {
        Long x = k;
        // Case I: a hit in T1 or T2 moves x to the MRU end of T2.
        if (t1.remove(x) || t2.remove(x)) {
            t2.add(x);
            return true;
        }
        if (b1.contains(x)) { // Case II: a ghost hit in B1 favours recency
            double delta = b1.size() >= b2.size() ? 1 : (double) b2.size() / b1.size();
            p = Math.min(p + delta, c);
            replace(false);
            b1.remove(x);
            t2.add(x);
            return false;
        }
        if (b2.contains(x)) { // Case III: a ghost hit in B2 favours frequency
            double delta = b2.size() >= b1.size() ? 1 : (double) b1.size() / b2.size();
            p = Math.max(p - delta, 0);
            replace(true);
            b2.remove(x);
            t2.add(x);
            return false;
        }
        // Case IV: x is in no list.
        int l1 = t1.size() + b1.size();
        int l2 = t2.size() + b2.size();
        if (l1 == c) { // Case A
            if (t1.size() < c) {
                removeFirst(b1);
                replace(false);
            } else {
                removeFirst(t1);
            }
        } else if (l1 < c && l1 + l2 >= c) { // Case B
            if (l1 + l2 == 2 * c) {
                removeFirst(b2);
            }
            replace(false);
        }
        t1.add(x);
        return false;
    }

    /** REPLACE(x, p): evicts T1's LRU to B1, or T2's LRU to B2. */
    private void replace(boolean xInB2) {
        if (!t1.isEmpty() && ((xInB2 && t1.size() == p) || t1.size() > p)) {
            b1.add(removeFirst(t1));
        } else if (!t2.isEmpty()) {
            b2.add(removeFirst(t2));
        } else {
            b1.add(removeFirst(t1));
        }
    }

    private static Long removeFirst(LinkedHashSet<Long> s) {
        Iterator<Long> it = s.iterator();
        Long first = it.next();
        it.remove();
        return first;
    }

    /** Keys cached now (T1 + T2), for tests. */
    int cached() {
        return t1.size() + t2.size();
    }
}
