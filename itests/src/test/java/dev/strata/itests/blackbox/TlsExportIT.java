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
 * are made here with certtool (gnutls-bin), PSK files with psktool.
 *
 * <p>In the same daemon: an export with {@code --tls-psk}, and {@code nbd} targets importing both
 * TLS exports ({@code nbds://} with alice's certificate, and with alice's PSK), re-exported in
 * plaintext on loopback so that data written through the TLS client path is read back over
 * TLS-PSK by nbdcopy: BouncyCastle's classes, embedded in the nbd bundle, run inside OSGi.
 */
public class TlsExportIT {
    private static final long MiB = 1L << 20;
    private static Strata strata;
    private static Strata.Daemon daemon;
    private static int port;
    private static int pskPort;
    private static int viaX509;
    private static int viaPsk;
    private static Path tls;

    @BeforeClass
    public static void start() throws Exception {
        strata = Strata.copy("tls-export");
        tls = Files.createDirectories(strata.work.resolve("tls"));
        makeCertificates();
        Files.createDirectories(tls.resolve("psk"));
        Clients.run(tls, "psktool", "-u", "alice", "-p", "psk/keys.psk").ok();
        port = Strata.freePort();
        pskPort = Strata.freePort();
        viaX509 = Strata.freePort();
        viaPsk = Strata.freePort();
        String keys = tls.resolve("psk/keys.psk").toString();
        daemon = strata.daemon("--no-default-stack", "-c", String.join("; ",
                "dev:create m0 memory size=16M",
                "nbd:export m0 --port " + port + " --tls require --tls-creds " + tls.resolve("server")
                        + " --allow CN=alice",
                "dev:create m1 memory size=8M",
                "nbd:export m1 --port " + pskPort + " --tls require --tls-psk " + keys,
                "dev:create r0 nbd uri=nbds://127.0.0.1:" + port + "/m0 tls-creds=" + tls.resolve("alice"),
                "nbd:export r0 --port " + viaX509,
                "dev:create r1 nbd uri=nbds://alice@127.0.0.1:" + pskPort + "/m1 tls-psk=" + keys,
                "nbd:export r1 --port " + viaPsk));
        Strata.awaitPort(port);
        Strata.awaitPort(viaPsk);
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

    @Test
    public void pskExportServesTheKeyFilesUsers() throws Exception {
        Clients.Out o = Clients.run(strata.work, "nbdinfo", "--size", "nbds://alice@127.0.0.1:" + pskPort
                + "/m1?tls-psk-file=" + tls.resolve("psk/keys.psk")).ok();
        assertEquals(o.toString(), Long.toString(8 * MiB), o.text().trim());
        Clients.Out plain = Clients.run(strata.work, "nbdinfo", "nbd://127.0.0.1:" + pskPort + "/m1");
        assertNotEquals(plain.toString(), 0, plain.exit());
    }

    @Test
    public void nbdTargetsImportTheTlsExports() throws Exception {
        Clients.Out o = Clients.run(strata.work, "nbdinfo", "--size", "nbd://127.0.0.1:" + viaX509 + "/r0").ok();
        assertEquals(o.toString(), Long.toString(16 * MiB), o.text().trim());
        byte[] data = new byte[(int) (8 * MiB)];
        new java.util.Random(29).nextBytes(data);
        Path in = Files.write(strata.work.resolve("psk-in.img"), data);
        Path out = strata.work.resolve("psk-out.img");
        // written through r1 (the nbd target's TLS-PSK client), read back from m1's PSK export
        Clients.run(strata.work, "nbdcopy", in.toString(), "nbd://127.0.0.1:" + viaPsk + "/r1").ok();
        Clients.run(strata.work, "nbdcopy", "nbds://alice@127.0.0.1:" + pskPort + "/m1?tls-psk-file="
                + tls.resolve("psk/keys.psk"), out.toString()).ok();
        org.junit.Assert.assertArrayEquals(data, Files.readAllBytes(out));
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
