package dev.strata.api;

import java.io.IOException;

/** {@link BlockDevice#FAST_ZERO} was asked for and the device cannot zero faster than it writes. */
public class FastZeroUnsupportedException extends IOException {
    private static final long serialVersionUID = 1L;

    public FastZeroUnsupportedException(String device) {
        super(device + ": fast zeroing is not supported");
    }
}
