package dev.strata.tools.internal;

import dev.strata.api.BlockDevice;
import dev.strata.tools.internal.format.CacheFormat;
import dev.strata.tools.internal.format.Findings;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Before {@code writeback} writes anything: is the backing device file the one the cache writes
 * back to? The tool opens the cache without the device manager, so the target's own identity
 * check does not run and only the size is compared; a wrong file of the same size would get the
 * dirty blocks and the cache would be left clean, so the real backing device would read stale
 * data from then on. The superblock names its backing device by identity; the stored
 * definitions say which identity a file carries. When they cannot tell, the operator confirms
 * with {@code --backing-id=ID} (the {@code backing_id} of {@code strata-tool dump}).
 */
final class BackingIdentity {
    /** The writeback is refused; the message is the one line printed. */
    static final class Refused extends Exception {
        Refused(String message) {
            super(message + "; nothing was written");
        }
    }

    private BackingIdentity() {
    }

    static void confirm(CacheFormat format, BlockDevice cache, Path backingFile, StoredDevices stored, String givenId)
            throws IOException, Refused {
        if (!format.holdsDirtyData() || format.name().equals("mirror-log")) {
            return; // nothing is written back
        }
        Findings f = format.scan(cache);
        if (!f.problems().isEmpty()) {
            return; // the writeback refuses a damaged cache itself
        }
        Object recorded = format.dump(cache, f).get("backing_id");
        String expected = recorded == null ? "" : recorded.toString();
        if (expected.isEmpty()) {
            return; // a rebuilt superblock names no backing identity: the target checks the size
        }
        Optional<StoredDevices.Device> owner = stored.withId(expected);
        String ownerText = owner.map(d -> ", device '" + d.name() + "' of type " + d.type()).orElse("");
        List<StoredDevices.FileDevice> over = stored.over(backingFile);
        if (!over.isEmpty()) {
            if (over.stream().anyMatch(d -> d.id().equals(expected))) {
                return;
            }
            StoredDevices.FileDevice d = over.get(0);
            throw new Refused("'" + backingFile + "' is device '" + d.name() + "' (id " + d.id()
                    + "), not this cache's backing device (id " + expected + ownerText
                    + "); give the file of the cache's own backing device");
        }
        if (givenId == null) {
            throw new Refused("no stored device definition (var/config/, deploy/) names '" + backingFile
                    + "', so the tool cannot tell whether it is this cache's backing device (id " + expected + ownerText
                    + "); a wrong file would get the dirty blocks and the cache would be left clean. If it is, run again with --backing-id="
                    + expected);
        }
        if (!givenId.equals(expected)) {
            throw new Refused("--backing-id=" + givenId + " is not this cache's backing device identity (" + expected + ownerText + ")");
        }
    }
}
