package dev.strata.itests;

import static org.junit.Assert.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;

/**
 * A program on a real pseudo-terminal, driven as a person would: {@code tmux} runs it in a
 * detached session on a private server socket (so tests never touch anyone else's tmux), keys are
 * sent with {@code send-keys} and the screen is read with {@code capture-pane}.
 */
final class Tmux implements AutoCloseable {

    private final String socket;
    private final String session = "t";

    private Tmux(String socket) {
        this.socket = socket;
    }

    /** Starts {@code command} (a shell command line) in {@code dir} on a 200x50 terminal. */
    static Tmux start(String name, Path dir, String command) {
        Tmux t = new Tmux("strata-it-" + name + "-" + ProcessHandle.current().pid());
        t.tmux("new-session", "-d", "-s", t.session, "-x", "200", "-y", "50", "-c", dir.toString(), command);
        t.tmux("set-option", "-t", t.session, "remain-on-exit", "on");
        return t;
    }

    /** Types text literally (no key names), without Enter. */
    void type(String text) {
        tmux("send-keys", "-t", session, "-l", text);
    }

    /** Sends tmux key names: "Enter", "Tab", "Up", "C-c", "C-l". */
    void keys(String... keys) {
        List<String> args = new ArrayList<>(List.of("send-keys", "-t", session));
        args.addAll(List.of(keys));
        tmux(args.toArray(new String[0]));
    }

    void line(String text) {
        type(text);
        keys("Enter");
    }

    /** The screen and its scroll-back, wrapped lines joined. */
    String screen() {
        return tmux("capture-pane", "-p", "-J", "-S", "-2000", "-t", session);
    }

    /** The visible screen only (no scroll-back). */
    String visible() {
        return tmux("capture-pane", "-p", "-J", "-t", session);
    }

    /** Waits (bounded) until the screen satisfies {@code condition}; returns that screen. */
    String await(String what, long seconds, Predicate<String> condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (true) {
            String s = screen();
            if (condition.test(s)) {
                return s;
            }
            if (System.nanoTime() - deadline > 0) {
                fail("not within " + seconds + " s: " + what + "; screen:\n" + s);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
        }
    }

    /** Waits until the screen shows {@code text} at least {@code count} times. */
    String awaitCount(String text, int count, long seconds) {
        return await(count + " × '" + text + "'", seconds, s -> occurrences(s, text) >= count);
    }

    static int occurrences(String s, String text) {
        int n = 0;
        for (int i = s.indexOf(text); i >= 0; i = s.indexOf(text, i + text.length())) {
            n++;
        }
        return n;
    }

    /** Whether the program in the pane has ended. */
    boolean exited() {
        return tmux("display-message", "-p", "-t", session, "#{pane_dead}").strip().equals("1");
    }

    @Override
    public void close() {
        try {
            tmux("kill-server");
        } catch (AssertionError | RuntimeException ignored) {
            // already gone
        }
    }

    private String tmux(String... args) {
        List<String> cmd = new ArrayList<>(List.of("tmux", "-L", socket));
        cmd.addAll(List.of(args));
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
                fail("tmux " + String.join(" ", args) + " failed: " + out);
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
