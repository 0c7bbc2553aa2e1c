package dev.strata.nbd.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * Real X.509 credentials made with {@code certtool} (gnutls-bin), laid out as qemu and libnbd
 * expect them: a CA, a server certificate for 127.0.0.1 / localhost signed by it, and, for the
 * refusal tests, a second unrelated CA and a self-signed server certificate.
 *
 * @param server      server credentials: ca-cert.pem, server-cert.pem, server-key.pem (PKCS#1 RSA, certtool's default)
 * @param client      what a client needs to trust the server: ca-cert.pem
 * @param wrongCa     a client directory whose ca-cert.pem is another CA
 * @param selfSigned  server credentials with a self-signed certificate (its ca-cert.pem is itself)
 * @param alice       a client directory with a client certificate CN=alice signed by the CA
 * @param mallory     the same for CN=mallory
 * @param strangerAlice  a client certificate CN=alice signed by the unrelated CA
 * @param expired     server credentials whose certificate (signed by the CA) expired in 2020
 * @param expiredAlice  a client certificate CN=alice signed by the CA that expired in 2020
 */
public record Certs(Path server, Path client, Path wrongCa, Path selfSigned, Path alice, Path mallory,
        Path strangerAlice, Path expired, Path expiredAlice) {
    /** certtool template lines for a certificate that was valid only in 2019. */
    private static final String LONG_AGO = "activation_date = \"2019-01-01 00:00:00 UTC\"\n"
            + "expiration_date = \"2020-01-01 00:00:00 UTC\"\n";


    public static Certs make(Path dir) throws IOException, InterruptedException {
        Tools.require("certtool", "gnutls-bin");
        Path work = Files.createDirectories(dir.resolve("work"));
        Path server = Files.createDirectories(dir.resolve("server"));
        Path client = Files.createDirectories(dir.resolve("client"));
        Path wrongCa = Files.createDirectories(dir.resolve("wrong-ca"));
        Path selfSigned = Files.createDirectories(dir.resolve("self-signed"));
        ca(work, "ca", "Strata test CA");
        ca(work, "other-ca", "Unrelated CA");
        key(server.resolve("server-key.pem"));
        Path serverInfo = Files.writeString(work.resolve("server.info"), """
                organization = Strata tests
                cn = localhost
                dns_name = localhost
                ip_address = 127.0.0.1
                tls_www_server
                encryption_key
                signing_key
                expiration_days = 2
                """);
        Tools.ok(work, "certtool", "--generate-certificate", "--load-ca-certificate", "ca-cert.pem",
                "--load-ca-privkey", "ca-key.pem", "--load-privkey", server.resolve("server-key.pem").toString(),
                "--template", serverInfo.toString(), "--outfile", server.resolve("server-cert.pem").toString());
        Files.copy(work.resolve("ca-cert.pem"), server.resolve("ca-cert.pem"));
        Files.copy(work.resolve("ca-cert.pem"), client.resolve("ca-cert.pem"));
        Files.copy(work.resolve("other-ca-cert.pem"), wrongCa.resolve("ca-cert.pem"));
        key(selfSigned.resolve("server-key.pem"));
        Tools.ok(work, "certtool", "--generate-self-signed", "--load-privkey",
                selfSigned.resolve("server-key.pem").toString(), "--template", serverInfo.toString(), "--outfile",
                selfSigned.resolve("server-cert.pem").toString());
        Files.copy(selfSigned.resolve("server-cert.pem"), selfSigned.resolve("ca-cert.pem"));
        Path alice = clientCert(dir, work, "alice", "ca");
        Path mallory = clientCert(dir, work, "mallory", "ca");
        Path stranger = clientCert(dir, work, "alice", "other-ca");
        Path expired = Files.createDirectories(dir.resolve("expired"));
        key(expired.resolve("server-key.pem"));
        Path expiredInfo = Files.writeString(work.resolve("expired.info"), "cn = localhost\ndns_name = localhost\n"
                + "ip_address = 127.0.0.1\ntls_www_server\nencryption_key\nsigning_key\n" + LONG_AGO);
        Tools.ok(work, "certtool", "--generate-certificate", "--load-ca-certificate", "ca-cert.pem",
                "--load-ca-privkey", "ca-key.pem", "--load-privkey", expired.resolve("server-key.pem").toString(),
                "--template", expiredInfo.toString(), "--outfile", expired.resolve("server-cert.pem").toString());
        Files.copy(work.resolve("ca-cert.pem"), expired.resolve("ca-cert.pem"));
        Path expiredAlice = clientCert(dir.resolve("expired-client"), work, "alice", "ca", LONG_AGO);
        return new Certs(server, client, wrongCa, selfSigned, alice, mallory, stranger, expired, expiredAlice);
    }

    /** libnbd's client layout: ca-cert.pem (the server's CA), client-cert.pem, client-key.pem. */
    private static Path clientCert(Path dir, Path work, String cn, String signer)
            throws IOException, InterruptedException {
        return clientCert(dir, work, cn, signer, "expiration_days = 2\n");
    }

    private static Path clientCert(Path dir, Path work, String cn, String signer, String validity)
            throws IOException, InterruptedException {
        Path d = Files.createDirectories(dir.resolve(cn + "-by-" + signer));
        Files.copy(work.resolve("ca-cert.pem"), d.resolve("ca-cert.pem"));
        key(d.resolve("client-key.pem"));
        Path info = Files.writeString(work.resolve(cn + "-" + signer + ".info"),
                "cn = " + cn + "\norganization = Strata tests\ntls_www_client\nencryption_key\nsigning_key\n" + validity);
        Tools.ok(work, "certtool", "--generate-certificate", "--load-ca-certificate", signer + "-cert.pem",
                "--load-ca-privkey", signer + "-key.pem", "--load-privkey", d.resolve("client-key.pem").toString(),
                "--template", info.toString(), "--outfile", d.resolve("client-cert.pem").toString());
        return d;
    }

    /** A JSSE client context trusting {@code dir/ca-cert.pem}. */
    public static SSLContext clientContext(Path dir) throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        try (var in = Files.newInputStream(dir.resolve("ca-cert.pem"))) {
            ks.setCertificateEntry("ca", (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ks);
        SSLContext c = SSLContext.getInstance("TLS");
        c.init(null, tmf.getTrustManagers(), null);
        return c;
    }

    private static void ca(Path work, String name, String cn) throws IOException, InterruptedException {
        key(work.resolve(name + "-key.pem"));
        Path info = Files.writeString(work.resolve(name + ".info"), "cn = " + cn + "\nca\ncert_signing_key\nexpiration_days = 2\n");
        Tools.ok(work, "certtool", "--generate-self-signed", "--load-privkey", name + "-key.pem", "--template",
                info.toString(), "--outfile", name + "-cert.pem");
    }

    private static void key(Path out) throws IOException, InterruptedException {
        Tools.ok(null, "certtool", "--generate-privkey", "--outfile", out.toString());
    }
}
