package dev.strata.tools.internal.format;

import java.util.ArrayList;
import java.util.List;

/**
 * What a scan of a cache device found: problems (one line each, for {@code check}), what a
 * repair would write (the overlay's patches: corrected bytes, or empty entries in place of
 * unreadable ones) and what that repair loses, in words.
 */
public final class Findings {
    private final Overlay overlay;
    private final List<String> problems = new ArrayList<>();
    private final List<String> repairs = new ArrayList<>();
    private final List<String> dropped = new ArrayList<>();
    private String unrepairable;
    private boolean needsInput;

    public Findings(Overlay overlay) {
        this.overlay = overlay;
    }

    public Overlay overlay() {
        return overlay;
    }

    /** A problem that the patch already laid on the overlay corrects without loss. */
    public void corrected(String problem, String repair) {
        problems.add(problem);
        repairs.add(repair);
    }

    /** A problem whose repair loses data: {@code lost} says exactly what. */
    public void lost(String problem, String lost) {
        problems.add(problem);
        dropped.add(lost);
    }

    /** A problem no repair can mend (the device stays refused). */
    public void fatal(String problem) {
        problems.add(problem);
        if (unrepairable == null) {
            unrepairable = problem;
        }
    }

    public List<String> problems() {
        return problems;
    }

    public List<String> repairs() {
        return repairs;
    }

    public List<String> dropped() {
        return dropped;
    }

    /**
     * A problem repair can mend only with what the operator passes ({@code problem} says what):
     * fatal for now, but the device is recognised as this format.
     */
    public void needs(String problem) {
        fatal(problem);
        needsInput = true;
    }

    /** Whether the device is this format's and only waits for the operator's input. */
    public boolean needsInput() {
        return needsInput;
    }

    /** Why the device cannot be made openable, or null. */
    public String unrepairable() {
        return unrepairable;
    }

    /** Reads {@code length} bytes at {@code offset} through the overlay. */
    public byte[] read(long offset, int length) throws java.io.IOException {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(length);
        overlay.read(offset, b);
        return b.array();
    }
}
