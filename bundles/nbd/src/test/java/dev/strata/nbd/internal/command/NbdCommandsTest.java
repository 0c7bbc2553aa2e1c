package dev.strata.nbd.internal.command;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class NbdCommandsTest {

    @Test
    void theExportedUriNamesTheAddressAskedForAsNbdExportsDoes() {
        // a wildcard bind is bound as the dual-stack "::"; the line said nbd://[0:0:0:0:0:0:0:0]:PORT/NAME
        assertEquals("0.0.0.0", NbdCommands.uriHost("0:0:0:0:0:0:0:0", "0.0.0.0"));
        assertEquals("127.0.0.1", NbdCommands.uriHost("127.0.0.1", ""), "the default: where it is bound");
        assertEquals("[::1]", NbdCommands.uriHost("0:0:0:0:0:0:0:1", "::1"));
        assertEquals("[0:0:0:0:0:0:0:1]", NbdCommands.uriHost("0:0:0:0:0:0:0:1", null));
    }
}
