package dev.strata.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import javax.inject.Inject;

import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.BundleContext;

import dev.strata.api.DeviceInfo;
import dev.strata.api.DeviceManager;
import dev.strata.api.DeviceState;

/** A {@code dev.strata.device-NAME.cfg} dropped in FileInstall's directory defines a device. */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class FileInstallIT {

    private static final String WORK = "fileinstall";

    @Inject
    BundleContext context;

    @Inject
    DeviceManager manager;

    @Configuration
    public Option[] config() {
        return StrataOptions.distribution(StrataOptions.workDir(WORK));
    }

    @Test
    public void aCfgFileCreatesChangesAndRemovesADevice() throws Exception {
        Path deploy = Path.of(context.getProperty("felix.fileinstall.dir"));
        Path data = deploy.getParent().resolve("data");
        Files.createDirectories(data);
        Path img = data.resolve("fi1.img");
        Path cfg = deploy.resolve("dev.strata.device-fi1.cfg");
        // written elsewhere, then moved in: FileInstall never sees a half-written file
        Path tmp = deploy.getParent().resolve("fi1.cfg.tmp");
        Files.writeString(tmp, "name=fi1\ntype=file\narg.path=" + img + "\narg.size=8M\narg.create=true\n");
        Files.move(tmp, cfg);

        Await.until("device fi1 from " + cfg + " up", 60,
                () -> manager.info("fi1").filter(d -> d.state() == DeviceState.ACTIVE && d.size() > 0).isPresent(),
                () -> manager.list().toString());
        DeviceInfo fi1 = manager.info("fi1").orElseThrow();
        assertEquals("file", fi1.type());
        assertEquals(8L << 20, fi1.size());
        assertTrue(Files.exists(img));

        Files.delete(cfg);
        Await.until("device fi1 removed with its .cfg file", 60, () -> manager.info("fi1").isEmpty(), () -> manager.list().toString());
        assertTrue("the data stays", Files.exists(img));
    }
}
