package dev.strata.driver.file.internal;

import dev.strata.api.BlockDevice;
import dev.strata.driver.support.internal.FileSpec;
import dev.strata.testsupport.contract.BlockDeviceContract;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.io.TempDir;

/** The BlockDevice contract on a fresh sparse file. */
class FileTargetContractTest extends BlockDeviceContract {
    @TempDir
    Path dir;

    @Override
    protected BlockDevice newDevice(long size) throws Exception {
        return FileTarget.open(FileSpec.parse("file", Map.of(
                "path", dir.resolve("disk.img").toString(), "size", Long.toString(size), "create", "true")), "disk");
    }
}
