package dev.strata.driver.direct.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.strata.api.InvalidArgumentException;
import dev.strata.driver.support.internal.FileSpec;

/**
 * The driver in a framework whose system bundle does not export com.sun.nio.file (Karaf's
 * default): the driver's classes are loaded by a loader that cannot see that package, as a bundle
 * whose optional import stayed unwired. The classes must still link, and creating a direct target
 * must give the one line and touch no file.
 */
class DirectWithoutComSunNioFileTest {

    /** Defines this driver's own classes itself and refuses com.sun.nio.file; the rest from the test loader. */
    static final class NoComSunNioFile extends ClassLoader {
        NoComSunNioFile() {
            super(DirectWithoutComSunNioFileTest.class.getClassLoader());
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (name.startsWith("com.sun.nio.file.")) {
                throw new ClassNotFoundException(name);
            }
            if (name.startsWith("dev.strata.driver.direct.internal.") && !name.contains("Test")) {
                synchronized (getClassLoadingLock(name)) {
                    Class<?> c = findLoadedClass(name);
                    if (c == null) {
                        try (InputStream in = getParent().getResourceAsStream(name.replace('.', '/') + ".class")) {
                            byte[] b = in.readAllBytes();
                            c = defineClass(name, b, 0, b.length);
                        } catch (IOException e) {
                            throw new ClassNotFoundException(name, e);
                        }
                    }
                    return c;
                }
            }
            return super.loadClass(name, resolve);
        }
    }

    @Test
    void createRefusesWithOneLineAndCreatesNoFile(@TempDir Path dir) throws Exception {
        ClassLoader loader = new NoComSunNioFile();
        Class<?> io = loader.loadClass("dev.strata.driver.direct.internal.DirectIo");
        Method available = io.getDeclaredMethod("available");
        available.setAccessible(true);
        assertFalse((Boolean) available.invoke(null));

        Path image = dir.resolve("d.img");
        Class<?> target = loader.loadClass("dev.strata.driver.direct.internal.DirectTarget");
        Method open = target.getDeclaredMethod("open", FileSpec.class, String.class);
        open.setAccessible(true);
        FileSpec spec = FileSpec.parse("direct", Map.of("path", image.toString(), "size", "1M", "create", "true"));
        Throwable thrown = null;
        try {
            open.invoke(null, spec, "d0");
        } catch (InvocationTargetException e) {
            thrown = e.getCause();
        }
        assertTrue(thrown instanceof InvalidArgumentException, String.valueOf(thrown));
        assertEquals(1, thrown.getMessage().lines().count());
        assertTrue(thrown.getMessage().contains("O_DIRECT is unavailable"), thrown.getMessage());
        assertTrue(thrown.getMessage().contains("com.sun.nio.file"), thrown.getMessage());
        assertFalse(Files.exists(image), "a refused create leaves no file");
    }

    @Test
    void onAPlainJdkItIsAvailable() {
        assertTrue(DirectIo.available());
    }
}
