package dev.strata.itests.blackbox;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * {@code nbd:export --tls require --tls-creds DIR --allow CN=alice} typed into a running
 * {@code bin/strata --daemon}: nbdinfo with alice's certificate gets the export over
 * {@code nbds://}, a plaintext client and a client with another name are refused. Certificates
 * are made here with certtool (gnutls-bin).
 */
public class TlsExportIT {
    private static final long MiB = 1L << 20;
    private static Strata strata;
    private static Strata.Daemon daemon;
    private static int port;
    private static Path tls;

    @BeforeClass
    public static void start() throws Exception {
        strata = Strata.copy("tls-export");
        tls = Files.createDirectories(strata.work.resolve("tls"));
        makeCertificates();
        port = Strata.freePort();
        daemon = strata.daemon("--no-default-stack", "-c", String.join("; ",
                "dev:create m0 memory size=16M",
                "nbd:export m0 --port " + port + " --tls require --tls-creds " + tls.resolve("server")
                        + " --allow CN=alice"));
        Strata.awaitPort(port);
    }

    @AfterClass
    public static void stop() throws Exception {
        if (daemon != null) {
            try {
                assertEquals("clean stop on SIGTERM" + daemon.diagnostics(), 0, daemon.stop());
            } finally {
                daemon.close();
            }
        }
    }

    private static String uri(String client) {
        return "nbds://127.0.0.1:" + port + "/m0?tls-certificates=" + tls.resolve(client);
    }

    @Test
    public void allowedClientGetsTheExportOverTls() throws Exception {
        Clients.Out o = Clients.run(strata.work, "nbdinfo", "--json", uri("alice")).ok();
        assertEquals(o.toString(), 16 * MiB, Clients.number(o.text(), "export-size", o));
        assertTrue(o.toString(), o.text().contains("\"TLS\": true"));
    }

    @Test
    public void plaintextAndUnlistedClientsAreRefused() throws Exception {
        Clients.Out plain = Clients.run(strata.work, "nbdinfo", "nbd://127.0.0.1:" + port + "/m0");
        assertNotEquals(plain.toString(), 0, plain.exit());
        assertTrue(plain.toString(), plain.text().contains("without TLS"));
        Clients.Out mallory = Clients.run(strata.work, "nbdinfo", uri("mallory"));
        assertNotEquals(mallory.toString(), 0, mallory.exit());
    }

    private static void makeCertificates() throws Exception {
        Files.createDirectories(tls.resolve("server"));
        certtool("--generate-privkey", "--outfile", "ca-key.pem");
        Files.writeString(tls.resolve("ca.info"), "cn = IT CA\nca\ncert_signing_key\nexpiration_days = 2\n");
        certtool("--generate-self-signed", "--load-privkey", "ca-key.pem", "--template", "ca.info", "--outfile",
                "ca-cert.pem");
        certtool("--generate-privkey", "--outfile", "server/server-key.pem");
        Files.writeString(tls.resolve("server.info"), "cn = localhost\nip_address = 127.0.0.1\ntls_www_server\n"
                + "encryption_key\nsigning_key\nexpiration_days = 2\n");
        certtool("--generate-certificate", "--load-ca-certificate", "ca-cert.pem", "--load-ca-privkey", "ca-key.pem",
                "--load-privkey", "server/server-key.pem", "--template", "server.info", "--outfile",
                "server/server-cert.pem");
        Files.copy(tls.resolve("ca-cert.pem"), tls.resolve("server/ca-cert.pem"));
        for (String cn : new String[] {"alice", "mallory"}) {
            Files.createDirectories(tls.resolve(cn));
            Files.copy(tls.resolve("ca-cert.pem"), tls.resolve(cn + "/ca-cert.pem"));
            certtool("--generate-privkey", "--outfile", cn + "/client-key.pem");
            Files.writeString(tls.resolve(cn + ".info"), "cn = " + cn + "\ntls_www_client\nencryption_key\n"
                    + "signing_key\nexpiration_days = 2\n");
            certtool("--generate-certificate", "--load-ca-certificate", "ca-cert.pem", "--load-ca-privkey",
                    "ca-key.pem", "--load-privkey", cn + "/client-key.pem", "--template", cn + ".info", "--outfile",
                    cn + "/client-cert.pem");
        }
    }

    private static void certtool(String... args) throws Exception {
        Clients.run(tls, "certtool", args).ok();
    }
}
