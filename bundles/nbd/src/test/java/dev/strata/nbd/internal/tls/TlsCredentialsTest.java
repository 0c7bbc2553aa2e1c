package dev.strata.nbd.internal.tls;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.strata.api.InvalidArgumentException;
import dev.strata.nbd.testing.Certs;
import dev.strata.nbd.testing.Tools;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PrivateKey;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Loading credentials: the key formats certtool writes, and one clear line for everything else. */
class TlsCredentialsTest {
    @TempDir
    static Path dir;
    static Certs certs;

    @BeforeAll
    static void make() throws Exception {
        certs = Certs.make(dir);
    }

    @Test
    void certtoolsDefaultRsaKeyLoads() throws Exception {
        assertTrue(Files.readString(certs.server().resolve("server-key.pem")).contains("BEGIN RSA PRIVATE KEY"));
        TlsCredentials c = TlsCredentials.load(certs.server());
        assertTrue(c.subject().contains("CN=localhost"), c.subject());
        assertEquals("TLS", c.context().getProtocol());
    }

    @Test
    void pkcs1AndPkcs8OfTheSameRsaKeyAreTheSameKey() throws Exception {
        Path p8 = dir.resolve("rsa-p8.pem");
        Tools.ok(null, "certtool", "--to-p8", "--password", "", "--load-privkey",
                certs.server().resolve("server-key.pem").toString(), "--outfile", p8.toString());
        assertTrue(Files.readString(p8).contains("BEGIN PRIVATE KEY"));
        PrivateKey a = PemFiles.privateKey(certs.server().resolve("server-key.pem"));
        PrivateKey b = PemFiles.privateKey(p8);
        assertEquals(b, a);
    }

    @Test
    void sec1EcKeyIsRefusedSayingHowToConvertItAndTheConvertedKeyWorks() throws Exception {
        Path d = Files.createDirectories(dir.resolve("ec"));
        Tools.ok(null, "certtool", "--generate-privkey", "--key-type=ecdsa", "--outfile", d.resolve("sec1.pem").toString());
        Files.copy(d.resolve("sec1.pem"), d.resolve("server-key.pem"));
        Path info = Files.writeString(d.resolve("info"), "cn = localhost\nip_address = 127.0.0.1\ntls_www_server\nsigning_key\nexpiration_days = 2\n");
        Tools.ok(d, "certtool", "--generate-self-signed", "--load-privkey", "server-key.pem", "--template",
                info.toString(), "--outfile", "server-cert.pem");
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> TlsCredentials.load(d));
        assertTrue(e.getMessage().contains("SEC1 EC key, which is not supported"), e.getMessage());
        assertTrue(e.getMessage().contains("certtool --to-p8 --password ''"), e.getMessage());
        assertFalse(e.getMessage().contains("Exception"), e.getMessage());
        // following the advice makes it load
        Files.delete(d.resolve("server-key.pem"));
        Tools.ok(d, "certtool", "--to-p8", "--password", "", "--load-privkey", "sec1.pem", "--outfile", "server-key.pem");
        assertEquals("EC", PemFiles.privateKey(d.resolve("server-key.pem")).getAlgorithm());
        TlsCredentials.load(d);
    }

    @Test
    void aKeyThatIsNotTheCertificatesIsRefused() throws Exception {
        Path d = Files.createDirectories(dir.resolve("mismatch"));
        Files.copy(certs.server().resolve("server-cert.pem"), d.resolve("server-cert.pem"));
        Files.copy(certs.selfSigned().resolve("server-key.pem"), d.resolve("server-key.pem"));
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> TlsCredentials.load(d));
        assertTrue(e.getMessage().contains("is not the key of the certificate"), e.getMessage());
    }

    @Test
    void encryptedKeysMissingFilesAndMissingDirectoriesGetOneClearLine() throws Exception {
        Path d = Files.createDirectories(dir.resolve("encrypted"));
        Files.copy(certs.server().resolve("server-cert.pem"), d.resolve("server-cert.pem"));
        Tools.ok(null, "certtool", "--to-p8", "--password", "secret", "--load-privkey",
                certs.server().resolve("server-key.pem").toString(), "--outfile", d.resolve("server-key.pem").toString());
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> TlsCredentials.load(d));
        assertTrue(e.getMessage().contains("encrypted PKCS#8 key, which is not supported"), e.getMessage());

        Path empty = Files.createDirectories(dir.resolve("empty"));
        e = assertThrows(InvalidArgumentException.class, () -> TlsCredentials.load(empty));
        assertTrue(e.getMessage().contains("server-cert.pem does not exist"), e.getMessage());

        e = assertThrows(InvalidArgumentException.class, () -> TlsCredentials.load(dir.resolve("nope")));
        assertTrue(e.getMessage().contains("is not a directory"), e.getMessage());

        Path garbage = Files.createDirectories(dir.resolve("garbage"));
        Files.writeString(garbage.resolve("server-cert.pem"), "not a certificate\n");
        e = assertThrows(InvalidArgumentException.class, () -> TlsCredentials.load(garbage));
        assertTrue(e.getMessage().contains("holds no PEM certificate"), e.getMessage());
    }
}
