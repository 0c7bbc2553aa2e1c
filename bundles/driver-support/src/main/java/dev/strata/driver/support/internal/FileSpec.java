package dev.strata.driver.support.internal;

import dev.strata.api.BlockDevice;
import dev.strata.api.DeviceIOException;
import dev.strata.api.InvalidArgumentException;
import dev.strata.api.TargetArguments;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.Set;

/**
 * The arguments of a file-backed target ({@code path=… [size=…] [create=true]}), checked against
 * the file system before anything is created or changed. Shared by the file and direct drivers,
 * which embed this package privately at build time (bundles share nothing but the api at run time).
 *
 * <p>Rules: an existing file is used at its own size, which must be a non-zero multiple of 512.
 * {@code size=} for an existing file must equal its size, or be larger with {@code create=true}
 * (the file is then grown, sparsely; files are never shrunk). A missing file needs
 * {@code create=true} and {@code size=}; it is created sparse. The parent directory must exist.
 *
 * <p>{@code preallocate=true} (with {@code create=true}) writes zeros over what is created or
 * grown, so that the file has no holes: O_DIRECT writes into holes on ext4 ran at ~2/3 of the
 * allocated rate (each allocates and converts extents). The JDK has no {@code fallocate}
 * ({@code RandomAccessFile.setLength} is {@code ftruncate}: sparse) and JNI or a spawned
 * {@code fallocate(1)} is not worth keeping for this, so the zeros are written, in 8 MiB
 * chunks, at the disk's speed, with progress and Ctrl-C between chunks (the file is then put
 * back as it was: removed, or cut back to its old length). Written zeros are also better than
 * fallocate's unwritten extents, whose first write still converts them. An existing file is
 * used as it is (its holes cannot be told from the JDK, and its data must not be touched).
 */
public final class FileSpec {
    public static final Set<String> KEYS = Set.of("path", "size", "create", "preallocate");
    /** Zeros written per I/O by {@code preallocate=true}. */
    static final int ZERO_CHUNK = 8 << 20;
    /** Largest size accepted: 2^60 bytes (1 EiB); the file system refuses earlier. */
    public static final long MAX_SIZE = 1L << 60;

    public final String type;
    public final Path path;
    /** The size asked for, or -1. */
    public final long requestedSize;
    public final boolean create;
    /** Zeros written over what {@link #prepare} creates or grows (no holes). */
    public final boolean preallocate;

    private FileSpec(String type, Path path, long requestedSize, boolean create, boolean preallocate) {
        this.type = type;
        this.path = path;
        this.requestedSize = requestedSize;
        this.create = create;
        this.preallocate = preallocate;
    }

    /** How far a preallocation has got (a build's progress line). */
    @FunctionalInterface
    public interface Progress {
        Progress NONE = (done, total) -> { };

        void update(long done, long total);
    }

    /** Parses and checks the arguments' form (not the file system). */
    public static FileSpec parse(String type, Map<String, String> arguments) {
        TargetArguments args = TargetArguments.of(type, arguments, KEYS);
        String raw = args.string("path");
        Path path;
        try {
            path = Paths.get(raw).toAbsolutePath().normalize();
        } catch (InvalidPathException e) {
            throw new InvalidArgumentException(type + ": path=" + raw + " is not a valid path");
        }
        boolean create = args.bool("create", false);
        boolean preallocate = args.bool("preallocate", false);
        if (preallocate && !create) {
            throw new InvalidArgumentException(type + ": preallocate=true goes with create=true (it allocates what "
                    + "create=true creates or grows); an existing file is used as it is");
        }
        long size = -1;
        if (args.has("size")) {
            try {
                size = args.size("size", BlockDevice.SECTOR, MAX_SIZE);
            } catch (InvalidArgumentException e) { // TargetArguments.parseSize does not name the type
                throw e.getMessage().startsWith(type + ":") ? e : new InvalidArgumentException(type + ": " + e.getMessage());
            }
            if (size % BlockDevice.SECTOR != 0) {
                throw new InvalidArgumentException(type + ": size=" + args.string("size")
                        + " is not a multiple of 512; use a multiple of 512 (e.g. 4096, 64M, 1G)");
            }
        }
        return new FileSpec(type, path, size, create, preallocate);
    }

    /** What {@link #check()} decided. */
    public static final class Plan {
        public final long size;
        /** The file must be created (sparse) at {@link #size}. */
        public final boolean createFile;
        /** The existing file must be grown (sparse) to {@link #size}. */
        public final boolean growFile;

        Plan(long size, boolean createFile, boolean growFile) {
            this.size = size;
            this.createFile = createFile;
            this.growFile = growFile;
        }
    }

    /** Checks the file system; changes nothing. */
    public Plan check() {
        if (Files.exists(path)) {
            if (Files.isDirectory(path)) {
                throw bad(path + " is a directory; give the path of a file");
            }
            if (!Files.isRegularFile(path)) {
                throw bad(path + " is not a regular file (only regular files are supported)");
            }
            if (!Files.isReadable(path) || !Files.isWritable(path)) {
                throw bad(path + " is not readable and writable by this process; fix its permissions");
            }
            long fileSize;
            try {
                fileSize = Files.size(path);
            } catch (IOException e) {
                throw bad("cannot read the size of " + path + ": " + e.getMessage());
            }
            if (fileSize % BlockDevice.SECTOR != 0) {
                throw bad(path + " is " + fileSize + " bytes, not a multiple of 512; resize it (truncate -s) first");
            }
            if (requestedSize < 0) {
                if (fileSize == 0) {
                    throw bad(path + " is empty; give size=… create=true to grow it into a device");
                }
                return new Plan(fileSize, false, false);
            }
            if (requestedSize < fileSize) {
                throw bad(path + " is " + fileSize + " bytes, larger than size=" + requestedSize
                        + "; omit size= to use the whole file (files are never shrunk)");
            }
            if (requestedSize > fileSize) {
                if (!create) {
                    throw bad(path + " is " + fileSize + " bytes, smaller than size=" + requestedSize
                            + "; add create=true to grow it, or omit size= to use it as it is");
                }
                return new Plan(requestedSize, false, true);
            }
            return new Plan(fileSize, false, false);
        }
        Path parent = path.getParent();
        if (parent == null || !Files.isDirectory(parent)) {
            throw bad("directory " + parent + " does not exist; create it first");
        }
        if (!create) {
            throw bad(path + " does not exist; add create=true size=… to create it");
        }
        if (requestedSize < 0) {
            throw bad(path + " does not exist and no size= was given; give size=… to create it");
        }
        if (!Files.isWritable(parent)) {
            throw bad("cannot create " + path + ": directory " + parent + " is not writable");
        }
        return new Plan(requestedSize, true, false);
    }

    /**
     * Creates or grows the file as planned (sparse: only the length changes). If creating
     * fails, the half-made file is removed.
     */
    public void prepare(Plan plan) throws IOException {
        prepare(plan, Progress.NONE);
    }

    /** As {@link #prepare(Plan)}; with {@code preallocate=true} the zeros' progress goes to {@code progress}. */
    public void prepare(Plan plan, Progress progress) throws IOException {
        long old = plan.createFile ? 0 : plan.growFile ? Files.size(path) : -1;
        if (plan.createFile) {
            try (FileChannel ignored = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                // created empty; the length is set below
            } catch (IOException e) {
                throw new DeviceIOException(path.toString(), 0, "cannot create the file: " + e, e);
            }
            try {
                setLength(plan.size);
            } catch (IOException e) {
                Files.deleteIfExists(path);
                throw e;
            }
        } else if (plan.growFile) {
            setLength(plan.size);
        }
        if (preallocate && old >= 0) {
            try {
                zero(old, plan.size, progress);
            } catch (IOException | RuntimeException e) {
                undo(plan, old);
                throw e;
            }
        }
    }

    /** Zeros over {@code [from, to)}, flushed; stops at the caller's interrupt between chunks. */
    private void zero(long from, long to, Progress progress) throws IOException {
        ByteBuffer zeros = ByteBuffer.allocateDirect((int) Math.min(ZERO_CHUNK, Math.max(1, to - from)));
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.WRITE)) {
            for (long at = from; at < to;) {
                if (Thread.currentThread().isInterrupted()) {
                    throw new java.io.InterruptedIOException(type + ": preallocation of " + path + " interrupted after "
                            + (at - from) + " of " + (to - from) + " bytes; the file is put back as it was");
                }
                zeros.clear().limit((int) Math.min(zeros.capacity(), to - at));
                while (zeros.hasRemaining()) {
                    at += ch.write(zeros, at);
                }
                progress.update(at - from, to - from);
            }
            ch.force(true);
        }
    }

    /** A preallocation that failed: the file as it was before {@link #prepare} (removed, or its old length). */
    private void undo(Plan plan, long old) throws IOException {
        if (plan.createFile) {
            Files.deleteIfExists(path);
            return;
        }
        // not through a FileChannel: with the caller's interrupt set it would close at once
        try (RandomAccessFile raf = new RandomAccessFile(path.toFile(), "rw")) {
            raf.setLength(old);
        }
    }

    /**
     * {@link #prepare} under a claim on the file for {@code device} ({@link ImageClaims}): an
     * existing file is claimed <em>before</em> it is grown, so a refused device changes nothing; a
     * file this call creates is claimed once it exists. The caller owns the claim: it releases it
     * when its target closes, or at once if opening fails.
     *
     * @throws dev.strata.api.InvalidArgumentException if another device holds the file
     */
    public ImageClaims.Claim prepareClaimed(Plan plan, String device) throws IOException {
        return prepareClaimed(plan, device, Progress.NONE);
    }

    /** As {@link #prepareClaimed(Plan, String)}, with a preallocation's progress. */
    public ImageClaims.Claim prepareClaimed(Plan plan, String device, Progress progress) throws IOException {
        ImageClaims.Claim claim = plan.createFile ? null : ImageClaims.claim(type, device, path);
        try {
            prepare(plan, progress);
            if (claim == null) {
                try {
                    claim = ImageClaims.claim(type, device, path);
                } catch (RuntimeException e) {
                    Files.deleteIfExists(path); // created just now (CREATE_NEW): ours to remove
                    throw e;
                }
            }
            return claim;
        } catch (Throwable e) { // an Error too: a class load failing while the driver is refreshed
            if (claim != null) {
                claim.release();
            }
            throw e;
        }
    }

    private void setLength(long size) throws IOException {
        try (RandomAccessFile raf = new RandomAccessFile(path.toFile(), "rw")) {
            if (raf.length() < size) {
                raf.setLength(size); // ftruncate: sparse
            }
        } catch (IOException e) {
            throw new DeviceIOException(path.toString(), size, "cannot set the file's length to " + size + ": " + e, e);
        }
    }

    private InvalidArgumentException bad(String message) {
        return new InvalidArgumentException(type + ": " + message);
    }
}
