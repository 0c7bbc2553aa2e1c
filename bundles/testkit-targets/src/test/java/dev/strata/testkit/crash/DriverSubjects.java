package dev.strata.testkit.crash;

import dev.strata.api.BlockDevice;
import dev.strata.api.TargetFactory;
import dev.strata.core.internal.linear.LinearTargetFactory;
import dev.strata.driver.direct.internal.DirectTargetFactory;
import dev.strata.driver.file.internal.FileTargetFactory;
import dev.strata.driver.memory.internal.MemoryTargetFactory;
import dev.strata.testsupport.crash.CrashTestSubject;
import dev.strata.testsupport.crash.Workload;
import dev.strata.testsupport.target.SimpleTargetContext;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * Crash-test subjects for the leaf drivers ({@code file}, {@code direct}, {@code memory}).
 *
 * <p>A leaf driver has no device below it to crash: what the crash model can do to it is a
 * <em>process</em> crash — the target is dropped and reopened from its file (the operating
 * system, and so the page cache, survives). Power loss below a file is not simulated. For crash
 * replay a driver serves as the <em>medium</em>: the workload runs on {@code linear} over
 * log-writes over the driver, and every replayed crash image is written into a fresh driver
 * device that {@code linear} is reopened over.
 */
public final class DriverSubjects {
    private static final AtomicInteger FILES = new AtomicInteger();

    private DriverSubjects() {
    }

    /** The factory of a driver type. */
    public static TargetFactory factory(String type) {
        return switch (type) {
            case "file" -> new FileTargetFactory();
            case "direct" -> new DirectTargetFactory();
            case "memory" -> new MemoryTargetFactory();
            default -> throw new IllegalArgumentException(type);
        };
    }

    /** A fresh driver device of {@code size} bytes (a new file under {@code dir} for file/direct). */
    static BlockDevice open(String type, Path dir, String name, long size) throws IOException {
        String args = type.equals("memory") ? "size=" + size
                : "path=" + dir.resolve(name + "-" + FILES.incrementAndGet() + ".img") + " size=" + size + " create=true";
        return factory(type).create(SimpleTargetContext.of(name, args));
    }

    /** {@code file} or {@code direct} at one path, crashed as a process (dropped and reopened). */
    public static CrashTestSubject leaf(String type, Path dir) {
        Path file = dir.resolve(type + "-leaf.img");
        String args = "path=" + file + " size=256k create=true";
        return new CrashTestSubject() {
            @Override
            public String name() {
                return type + " (process crash)";
            }

            @Override
            public BlockDevice create(List<BlockDevice> devices) throws IOException {
                Files.deleteIfExists(file);
                return reopen(devices);
            }

            @Override
            public BlockDevice reopen(List<BlockDevice> devices) throws IOException {
                return factory(type).create(SimpleTargetContext.of(type + "0", args));
            }
        };
    }

    /** {@code memory}: keeps nothing across a reopen, so its sequences have no crashes and no restarts. */
    public static CrashTestSubject memory() {
        return new CrashTestSubject() {
            @Override
            public String name() {
                return "memory (no crashes)";
            }

            @Override
            public BlockDevice create(List<BlockDevice> devices) {
                return new MemoryTargetFactory().create(SimpleTargetContext.of("mem0", "size=256k"));
            }

            @Override
            public BlockDevice reopen(List<BlockDevice> devices) {
                throw new UnsupportedOperationException("memory keeps nothing across a reopen");
            }

            @Override
            public Workload workload() {
                return Workload.DEFAULT.withoutCrashes();
            }
        };
    }

    /** {@code linear} over a driver device as the recorded and the replayed medium. */
    public static CrashTestSubject linearOverDriver(String type, Path dir) {
        return new CrashTestSubject() {
            @Override
            public String name() {
                return "linear over " + type;
            }

            @Override
            public List<DeviceSpec> devices() {
                return List.of(new DeviceSpec("disk", 512 * 1024, 4096));
            }

            @Override
            public BlockDevice create(List<BlockDevice> devices) throws IOException {
                return reopen(devices);
            }

            @Override
            public BlockDevice reopen(List<BlockDevice> devices) throws IOException {
                return new LinearTargetFactory().create(SimpleTargetContext.of("lin0", "device=disk offset=64k").with("disk", devices.get(0)));
            }

            @Override
            public BlockDevice recordingMedium(DeviceSpec spec) throws IOException {
                return open(type, dir, spec.name(), spec.size());
            }

            @Override
            public BlockDevice replayMedium(DeviceSpec spec, byte[] image) throws IOException {
                BlockDevice d = open(type, dir, spec.name(), spec.size());
                for (int off = 0; off < image.length; off += 65536) {
                    d.write(off, ByteBuffer.wrap(image, off, Math.min(65536, image.length - off)), 0);
                }
                d.flush();
                return d;
            }
        };
    }

    /** Deletes a temporary directory and what is in it. */
    static void delete(Path dir) {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.delete(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
