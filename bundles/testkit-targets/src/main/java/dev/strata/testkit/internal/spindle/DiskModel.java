package dev.strata.testkit.internal.spindle;

/**
 * A single-actuator rotating disk, as service times. Deterministic: the same parameters, seed
 * and request sequence give the same times. Not thread-safe (the target serializes requests, as
 * the actuator does).
 *
 * <ul>
 * <li><b>Sequential</b>: a request starting where the previous one ended costs its transfer
 * time only ({@code length / transfer rate}).
 * <li><b>Short forward gap</b> (less than one track, i.e. the bytes passing under the head in
 * one revolution): the head waits for the gap to rotate by, then transfers.
 * <li><b>Anything else</b>: a seek, growing with the square root of the distance as a fraction of
 * the {@code capacity} — {@code track_to_track + (full_stroke − track_to_track)·√(d/capacity)},
 * with the full stroke chosen so that the average over random positions is {@code seek} — plus
 * a rotational latency uniform in one revolution (from the seeded generator), plus the transfer.
 * </ul>
 * Defaults (7200 rpm, 4 ms average seek, 0.5 ms track to track, 150 MB/s) give about 150 MB/s
 * sequential and about 120 random 4 KiB requests per second.
 */
public final class DiskModel {
    /** E[√|X−Y|] for X, Y uniform on [0, 1]: the average of the seek curve's distance term. */
    private static final double MEAN_SQRT_DISTANCE = 8.0 / 15.0;

    /**
     * @param rpm              spindle speed
     * @param seekNanos        average seek time between random positions
     * @param trackToTrackNanos shortest seek
     * @param bytesPerSecond   media transfer rate
     * @param capacity         bytes the seek curve spans (a full stroke)
     * @param seed             seed of the rotational positions
     */
    public record Params(double rpm, long seekNanos, long trackToTrackNanos, double bytesPerSecond, long capacity, long seed) {
        public Params {
            if (rpm <= 0 || seekNanos < 0 || trackToTrackNanos < 0 || trackToTrackNanos > seekNanos || bytesPerSecond <= 0 || capacity <= 0) {
                throw new IllegalArgumentException("bad disk parameters " + this);
            }
        }

        /** A 7200 rpm disk of {@code capacity} bytes: 4 ms average seek, 0.5 ms track to track, 150 MB/s. */
        public static Params defaults(long capacity) {
            return new Params(7200, 4_000_000, 500_000, 150e6, capacity, 0);
        }

        /** Nanoseconds per revolution. */
        public double revolutionNanos() {
            return 60e9 / rpm;
        }

        /** Bytes passing under the head in one revolution. */
        public double trackBytes() {
            return bytesPerSecond * revolutionNanos() / 1e9;
        }
    }

    private final Params p;
    private final double fullStrokeNanos;
    private long head;
    private long rng;
    private long seeks;

    public DiskModel(Params params) {
        this.p = params;
        this.fullStrokeNanos = params.trackToTrackNanos() + (params.seekNanos() - params.trackToTrackNanos()) / MEAN_SQRT_DISTANCE;
        this.rng = params.seed() * 0x9E3779B97F4A7C15L + 0x2545F4914F6CDD1DL;
    }

    public Params params() {
        return p;
    }

    /** The head position: where the last request ended. */
    public long head() {
        return head;
    }

    /** How many requests needed a seek so far. */
    public long seeks() {
        return seeks;
    }

    /** The service time of a read or write of {@code length} bytes at {@code offset}; moves the head. */
    public long service(long offset, long length) {
        double transfer = length * 1e9 / p.bytesPerSecond();
        double position;
        long gap = offset - head;
        if (gap == 0) {
            position = 0;
        } else if (gap > 0 && gap < p.trackBytes()) {
            position = gap * 1e9 / p.bytesPerSecond();
        } else {
            seeks++;
            double distance = Math.min(1.0, Math.abs((double) gap) / p.capacity());
            double seek = p.trackToTrackNanos() + (fullStrokeNanos - p.trackToTrackNanos()) * Math.sqrt(distance);
            position = seek + nextUnit() * p.revolutionNanos();
        }
        head = offset + length;
        return Math.round(position + transfer);
    }

    /** A uniform number in [0, 1) from the seeded generator (SplitMix64). */
    private double nextUnit() {
        long z = (rng += 0x9E3779B97F4A7C15L);
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        z ^= z >>> 31;
        return (z >>> 11) * 0x1.0p-53;
    }
}
