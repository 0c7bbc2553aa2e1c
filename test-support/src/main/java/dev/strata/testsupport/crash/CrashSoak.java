package dev.strata.testsupport.crash;

/**
 * The soak switch: {@code -Dstrata.soak=true} (passed through by {@code mvn verify} to every
 * test JVM) makes every crash model and crash replay run {@value #SOAK_FACTOR} times more
 * crashes, with the same tests and the same checks. A normal CI run keeps {@link #factor()} 1.
 * <ul>
 * <li>{@link CrashModelRunner#run(CrashTestSubject, java.util.List, CrashStats)} runs each
 * sequence, then {@code factor - 1} variants of it whose crashes and power cuts are re-drawn
 * (mode, seed, and where a power cut falls) from a {@link java.util.Random} seeded by the
 * sequence, so a failing variant reproduces from the sequence it prints;
 * <li>{@link CrashModelProperties}'s floor of crashes per target is multiplied by the factor;
 * <li>{@link CrashReplay#run} replays {@code factor} recordings (seeds {@code seed},
 * {@code seed + 1_000_003}, …) into one report.
 * </ul>
 * {@link CrashModelRunner#atEveryStep} is exhaustive already (every lower request of the
 * operation) and is not multiplied.
 */
public final class CrashSoak {
    /** The system property. */
    public static final String PROPERTY = "strata.soak";
    /** How many times more crashes a soak run makes. */
    public static final int SOAK_FACTOR = 10;

    private CrashSoak() {
    }

    public static boolean enabled() {
        return Boolean.parseBoolean(System.getProperty(PROPERTY, "false").trim());
    }

    /** 1 normally, {@value #SOAK_FACTOR} with {@code -Dstrata.soak=true}. */
    public static int factor() {
        return enabled() ? SOAK_FACTOR : 1;
    }
}
