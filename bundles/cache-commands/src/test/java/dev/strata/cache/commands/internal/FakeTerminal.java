package dev.strata.cache.commands.internal;

/**
 * What the console puts in its session as {@code .terminal} (a JLine terminal), as far as the
 * commands look at it: its type. Sessions given one draw progress with {@code \r}, as on a terminal.
 */
public final class FakeTerminal {
    private final String type;

    public FakeTerminal(String type) {
        this.type = type;
    }

    public String getType() {
        return type;
    }

    static final FakeTerminal XTERM = new FakeTerminal("xterm-256color");
}
