package dev.strata.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DeployOwnershipTest {

    @TempDir
    Path dir;

    private static String config(String fileName) {
        return String.join("\n",
                ":org.apache.felix.configadmin.revision:=L\"5\"",
                "arg.backing=\"backing0\"",
                "felix.fileinstall.filename=\"" + fileName + "\"",
                "name=\"wb0\"",
                "service.factoryPid=\"dev.strata.device\"", "");
    }

    @Test
    void aCopiedDistributionsDefinitionsNameItsOwnDeployFiles() throws Exception {
        Path original = Files.createDirectories(dir.resolve("strata/deploy"));
        Path copy = Files.createDirectories(dir.resolve("strata2/deploy"));
        Path cm = Files.createDirectories(dir.resolve("strata2/var/config/dev/strata"));
        String foreign = original.resolve("dev.strata.device-wb0.cfg").toFile().toURI().toString();
        Path f = cm.resolve("device%007ewb0.config");
        Files.writeString(f, config(foreign));

        List<Path> before = DeployOwnership.adopt(dir.resolve("strata2/var/config"), copy);

        assertEquals(List.of(original.toAbsolutePath().normalize()), before);
        String own = copy.resolve("dev.strata.device-wb0.cfg").toFile().toURI().toString();
        assertEquals(config(own), Files.readString(f), "only the file name's directory changes");
    }

    @Test
    void definitionsAlreadyNamingThisDeployDirectoryAreLeftAlone() throws Exception {
        Path deploy = Files.createDirectories(dir.resolve("strata/deploy"));
        Path cm = Files.createDirectories(dir.resolve("strata/var/config"));
        String own = deploy.resolve("dev.strata.device-wb0.cfg").toFile().toURI().toString();
        Path f = cm.resolve("a.config");
        Files.writeString(f, config(own));
        Path g = cm.resolve("b.config");
        String noFile = config(own).replace("felix.fileinstall.filename", "other.key");
        Files.writeString(g, noFile);
        long modified = Files.getLastModifiedTime(f).toMillis();

        assertEquals(List.of(), DeployOwnership.adopt(cm, deploy));
        assertEquals(config(own), Files.readString(f));
        assertEquals(noFile, Files.readString(g));
        assertEquals(modified, Files.getLastModifiedTime(f).toMillis());
    }

    @Test
    void noStoredConfigurationYetIsNotAnError() throws Exception {
        assertEquals(List.of(), DeployOwnership.adopt(dir.resolve("missing"), dir.resolve("deploy")));
    }
}
