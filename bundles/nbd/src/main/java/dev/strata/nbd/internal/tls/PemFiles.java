package dev.strata.nbd.internal.tls;

import dev.strata.api.InvalidArgumentException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads PEM certificates and private keys with the JDK alone (no native library, no BouncyCastle).
 * Keys: unencrypted PKCS#8 ({@code BEGIN PRIVATE KEY}: RSA, EC, Ed25519/Ed448) and PKCS#1 RSA
 * ({@code BEGIN RSA PRIVATE KEY}, what {@code certtool --generate-privkey} writes), which is
 * rewrapped as PKCS#8. Encrypted keys and SEC1 EC keys ({@code BEGIN EC PRIVATE KEY}) are refused
 * with a line saying how to convert them.
 */
public final class PemFiles {
    private static final Pattern BLOCK = Pattern.compile(
            "-----BEGIN ([A-Z0-9 ]+)-----\\s*([A-Za-z0-9+/=\\s]*?)-----END \\1-----");
    /** DER of AlgorithmIdentifier { rsaEncryption, NULL }. */
    private static final byte[] RSA_ALGORITHM = {0x30, 0x0d, 0x06, 0x09, 0x2a, (byte) 0x86, 0x48, (byte) 0x86,
        (byte) 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00};

    private PemFiles() {
    }

    /** The certificates in a PEM file, in file order (the first is the subject's own). */
    public static List<X509Certificate> certificates(Path file) {
        String text = read(file);
        List<X509Certificate> out = new ArrayList<>();
        try {
            CertificateFactory cf = CertificateFactory.getInstance("X.509");
            Matcher m = BLOCK.matcher(text);
            while (m.find()) {
                if (m.group(1).equals("CERTIFICATE")) {
                    out.add((X509Certificate) cf.generateCertificate(new ByteArrayInputStream(der(m, file))));
                }
            }
        } catch (CertificateException e) {
            throw new InvalidArgumentException("TLS: " + file + " holds a certificate that cannot be read ("
                    + e.getMessage() + "); give a PEM X.509 certificate");
        }
        if (out.isEmpty()) {
            throw new InvalidArgumentException("TLS: " + file + " holds no PEM certificate (-----BEGIN CERTIFICATE-----)");
        }
        return out;
    }

    /** The private key in a PEM file. */
    public static PrivateKey privateKey(Path file) {
        Matcher m = BLOCK.matcher(read(file));
        while (m.find()) {
            String type = m.group(1);
            switch (type) {
                case "PRIVATE KEY":
                    return pkcs8(der(m, file), file);
                case "RSA PRIVATE KEY":
                    return pkcs8(rsaPkcs1ToPkcs8(der(m, file)), file);
                case "ENCRYPTED PRIVATE KEY":
                    throw unsupported(file, "an encrypted PKCS#8 key");
                case "EC PRIVATE KEY":
                    throw unsupported(file, "a SEC1 EC key");
                default:
                    break; // e.g. EC PARAMETERS before the key
            }
        }
        throw new InvalidArgumentException("TLS: " + file + " holds no PEM private key (-----BEGIN PRIVATE KEY-----)");
    }

    private static InvalidArgumentException unsupported(Path file, String what) {
        return new InvalidArgumentException("TLS: " + file + " is " + what + ", which is not supported; convert it"
                + " to an unencrypted PKCS#8 key: openssl pkcs8 -topk8 -nocrypt -in " + file.getFileName()
                + " -out key.pem (or certtool --to-p8 --password '' --load-privkey "
                + file.getFileName() + ")");
    }

    private static PrivateKey pkcs8(byte[] der, Path file) {
        PKCS8EncodedKeySpec spec = new PKCS8EncodedKeySpec(der);
        for (String alg : new String[] {"RSA", "EC", "Ed25519", "Ed448", "RSASSA-PSS"}) {
            try {
                return KeyFactory.getInstance(alg).generatePrivate(spec);
            } catch (GeneralSecurityException | RuntimeException e) {
                // not this algorithm: try the next
            }
        }
        throw new InvalidArgumentException("TLS: the key in " + file
                + " is not an RSA, EC or EdDSA PKCS#8 key that Java can read");
    }

    /** PrivateKeyInfo { version 0, rsaEncryption, OCTET STRING { the PKCS#1 key } }. */
    static byte[] rsaPkcs1ToPkcs8(byte[] pkcs1) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.writeBytes(new byte[] {0x02, 0x01, 0x00});
        body.writeBytes(RSA_ALGORITHM);
        tlv(body, 0x04, pkcs1);
        ByteArrayOutputStream seq = new ByteArrayOutputStream();
        tlv(seq, 0x30, body.toByteArray());
        return seq.toByteArray();
    }

    private static void tlv(ByteArrayOutputStream out, int tag, byte[] value) {
        out.write(tag);
        int n = value.length;
        if (n < 0x80) {
            out.write(n);
        } else if (n < 0x100) {
            out.write(0x81);
            out.write(n);
        } else if (n < 0x10000) {
            out.write(0x82);
            out.write(n >> 8);
            out.write(n);
        } else {
            out.write(0x83);
            out.write(n >> 16);
            out.write(n >> 8);
            out.write(n);
        }
        out.writeBytes(value);
    }

    private static byte[] der(Matcher m, Path file) {
        try {
            return Base64.getMimeDecoder().decode(m.group(2));
        } catch (IllegalArgumentException e) {
            throw new InvalidArgumentException("TLS: " + file + ": the " + m.group(1) + " block is not valid base64");
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.US_ASCII);
        } catch (NoSuchFileException e) {
            throw new InvalidArgumentException("TLS: " + file + " does not exist; the credentials directory needs"
                    + " ca-cert.pem, server-cert.pem and server-key.pem (see docs/nbd.md, TLS)");
        } catch (IOException e) {
            throw new InvalidArgumentException("TLS: cannot read " + file + ": " + e.getMessage());
        }
    }
}
