package dev.strata.tools.internal;

import dev.strata.api.BlockDevice;
import dev.strata.api.InvalidArgumentException;
import dev.strata.driver.file.internal.FileTargetFactory;
import dev.strata.tools.internal.format.CacheFormat;
import dev.strata.tools.internal.format.Formats;
import dev.strata.tools.internal.format.Hints;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code strata-tool check|dump|repair|writeback [--json] [--type=T] CACHE [BACKING]}: exit 0
 * fine, 1 the device has problems or the command could not do its job, 2 bad input (one line).
 */
public final class Main {
    static final String USAGE = "usage: strata-tool check|dump [--json] CACHE_FILE | repair CACHE_FILE [BACKING_FILE]"
            + " [--backing-size=BYTES] [--block-size=512|4096|…] | writeback CACHE_FILE BACKING_FILE [--backing-id=ID]"
            + "  [--type=writeboost|writecache|readcache|mirror-log]";

    private Main() {
    }

    public static void main(String[] args) {
        String home = System.getProperty("strata.tool.home");
        System.exit(run(args, home == null ? null : Path.of(home), System.out, System.err));
    }

    /** Thrown for bad input: the message is the one line printed. */
    static final class BadInput extends Exception {
        BadInput(String message) {
            super(message);
        }
    }

    public static int run(String[] args, PrintStream out, PrintStream err) {
        return run(args, null, out, err);
    }

    /**
     * @param home the distribution whose stored device definitions tell which identity a backing
     *     device file carries (bin/strata-tool passes its own), or null for none
     */
    public static int run(String[] args, Path home, PrintStream out, PrintStream err) {
        List<BlockDevice> open = new ArrayList<>();
        try {
            List<String> pos = new ArrayList<>();
            boolean json = false;
            String type = null;
            long backingSize = 0;
            int blockSize = 0;
            String backingId = null;
            for (String a : args) {
                if (a.equals("--json")) {
                    json = true;
                } else if (a.startsWith("--backing-size=")) {
                    backingSize = number(a, "--backing-size=", Long.MAX_VALUE);
                } else if (a.startsWith("--block-size=")) {
                    blockSize = (int) number(a, "--block-size=", 1 << 20);
                } else if (a.startsWith("--backing-id=")) {
                    backingId = a.substring("--backing-id=".length());
                } else if (a.startsWith("--type=")) {
                    type = a.substring("--type=".length());
                } else if (a.startsWith("-")) {
                    throw new BadInput("unknown option '" + a + "'; " + USAGE);
                } else {
                    pos.add(a);
                }
            }
            if (pos.isEmpty()) {
                throw new BadInput(USAGE);
            }
            String cmd = pos.get(0);
            int want = switch (cmd) {
                case "check", "dump", "repair" -> 2;
                case "writeback" -> 3;
                default -> throw new BadInput("unknown command '" + cmd + "'; " + USAGE);
            };
            if (cmd.equals("repair") && pos.size() == 3) {
                want = 3; // repair CACHE BACKING: the backing file only tells its size
            }
            if ((backingSize != 0 || blockSize != 0) && !cmd.equals("repair")) {
                throw new BadInput("--backing-size and --block-size go with repair only; " + USAGE);
            }
            if (pos.size() != want) {
                throw new BadInput(cmd + " takes " + (want == 2 ? "one device file" : "a cache device file and a backing device file")
                        + "; " + USAGE);
            }
            if (backingId != null && !cmd.equals("writeback")) {
                throw new BadInput("--backing-id goes with writeback only; " + USAGE);
            }
            if (json && !cmd.equals("dump")) {
                throw new BadInput("--json goes with dump only; " + USAGE);
            }
            inUse(cmd, pos, err);
            BlockDevice cache = openFile(pos.get(1), "cache", open);
            if (cmd.equals("repair") && pos.size() == 3) {
                long given = openFile(pos.get(2), "backing", open).size();
                if (backingSize != 0 && backingSize != given) {
                    throw new BadInput("--backing-size=" + backingSize + " differs from the backing device file's size " + given
                            + "; give one of them");
                }
                backingSize = given;
            }
            Hints hints = new Hints(backingSize, blockSize);
            CacheFormat format;
            if (type != null) {
                format = Formats.named(type);
                if (format == null) {
                    throw new BadInput("unknown --type '" + type + "'; use writeboost, writecache, readcache or mirror-log");
                }
            } else {
                format = Formats.detect(cache, hints);
                if (format == null) {
                    throw new BadInput(pos.get(1) + " holds no Strata cache the tool can read (no writeboost, writecache or "
                            + "readcache superblock, no mirror log header); name the format with --type= if its superblock is damaged");
                }
            }
            return switch (cmd) {
                case "check" -> Tool.check(format, cache, pos.get(1), out);
                case "dump" -> Tool.dump(format, cache, json, out);
                case "repair" -> Tool.repair(format, cache, hints, out);
                default -> {
                    BlockDevice backing = openFile(pos.get(2), "backing", open);
                    BackingIdentity.confirm(format, cache, Path.of(pos.get(2)), StoredDevices.of(home), backingId);
                    yield Tool.writeback(format, cache, backing, out);
                }
            };
        } catch (BadInput | BackingIdentity.Refused e) {
            err.println("strata-tool: " + e.getMessage());
            return 2;
        } catch (InvalidArgumentException e) {
            err.println("strata-tool: " + e.getMessage());
            return 2;
        } catch (IOException | RuntimeException e) {
            err.println("strata-tool: " + (e.getMessage() == null ? "failed: " + e : e.getMessage()));
            return 1;
        } catch (InterruptedException e) {
            err.println("strata-tool: interrupted; blocks written back so far stay written back, the rest stay dirty");
            return 1;
        } finally {
            for (BlockDevice d : open) {
                try {
                    d.close();
                } catch (IOException e) {
                    err.println("strata-tool: closing a device failed: " + e.getMessage());
                }
            }
        }
    }

    /**
     * A device file another process has open: repair and writeback refuse (they would write under
     * a running target, see {@link OpenFiles}); check and dump read on, saying the picture may move.
     */
    private static void inUse(String cmd, List<String> pos, PrintStream err) throws BadInput {
        boolean writes = cmd.equals("repair") || cmd.equals("writeback");
        for (int i = 1; i < pos.size(); i++) {
            String role = i == 1 ? "cache" : "backing";
            Path p = Path.of(pos.get(i));
            if (!Files.isRegularFile(p)) {
                continue; // openFile says what is wrong with it
            }
            java.util.Optional<String> holder = OpenFiles.holder(p);
            if (holder.isEmpty()) {
                continue;
            }
            if (writes) {
                throw new BadInput("the " + role + " device file '" + pos.get(i) + "' is open in " + holder.get()
                        + "; stop it, or dev:remove the device using the file, first (" + cmd
                        + " would write under a running target); nothing was written");
            }
            err.println("strata-tool: warning: the " + role + " device file '" + pos.get(i) + "' is open in "
                    + holder.get() + "; what " + cmd + " reads may change while it reads");
        }
    }

    private static long number(String arg, String prefix, long max) throws BadInput {
        try {
            long v = Long.parseLong(arg.substring(prefix.length()));
            if (v <= 0 || v > max) {
                throw new NumberFormatException();
            }
            return v;
        } catch (NumberFormatException e) {
            throw new BadInput(prefix.substring(0, prefix.length() - 1) + " takes a positive whole number of bytes, not '"
                    + arg.substring(prefix.length()) + "'");
        }
    }

    private static BlockDevice openFile(String file, String role, List<BlockDevice> open) throws BadInput, IOException {
        Path p = Path.of(file);
        if (!Files.isRegularFile(p) && !Files.exists(p)) {
            throw new BadInput("the " + role + " device file '" + file + "' does not exist");
        }
        if (!Files.isReadable(p) || !Files.isWritable(p)) {
            throw new BadInput("the " + role + " device file '" + file + "' must be readable and writable");
        }
        BlockDevice d = new FileTargetFactory().create(new Context(role, Map.of("path", file), Map.of()));
        open.add(d);
        return d;
    }
}
