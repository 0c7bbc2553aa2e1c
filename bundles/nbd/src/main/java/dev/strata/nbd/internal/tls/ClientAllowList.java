package dev.strata.nbd.internal.tls;

import dev.strata.api.InvalidArgumentException;
import java.io.IOException;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import javax.security.auth.x500.X500Principal;

/**
 * The client certificate subjects an export lets in. An entry {@code CN=name} admits any
 * certificate (signed by the export's CA) whose common name is exactly {@code name}; an entry
 * with more attributes ({@code CN=a,O=b}) must equal the whole subject. Empty: every client
 * certificate the CA signed is admitted.
 */
public final class ClientAllowList {
    private final List<String> entries;
    private final List<String> commonNames = new ArrayList<>();
    private final List<X500Principal> subjects = new ArrayList<>();

    /** @param entries subject names; each is checked here so a typo is refused when the export starts */
    public ClientAllowList(List<String> entries) {
        this.entries = List.copyOf(entries);
        for (String e : this.entries) {
            LdapName name;
            try {
                name = new LdapName(e.trim());
            } catch (InvalidNameException | IllegalArgumentException ex) {
                throw new InvalidArgumentException("TLS: --allow " + e + " is not a subject name; write CN=client-name");
            }
            if (name.size() == 0) {
                throw new InvalidArgumentException("TLS: --allow is empty; write CN=client-name");
            }
            if (name.size() == 1 && name.getRdn(0).getType().equalsIgnoreCase("CN")) {
                commonNames.add(name.getRdn(0).getValue().toString());
            } else {
                subjects.add(new X500Principal(e.trim()));
            }
        }
    }

    public List<String> entries() {
        return entries;
    }

    public boolean isEmpty() {
        return entries.isEmpty();
    }

    /**
     * Checks the verified client certificate of a finished handshake.
     *
     * @throws IOException naming the subject when it is not admitted
     */
    public void check(SSLSession session) throws IOException {
        if (entries.isEmpty()) {
            return;
        }
        Certificate[] chain;
        try {
            chain = session.getPeerCertificates();
        } catch (SSLPeerUnverifiedException e) {
            throw new IOException("the client sent no certificate");
        }
        X500Principal subject = ((X509Certificate) chain[0]).getSubjectX500Principal();
        if (subjects.contains(subject) || commonNames.contains(commonName(subject))) {
            return;
        }
        throw new IOException("client certificate " + subject.getName() + " is not on the allow-list");
    }

    private static String commonName(X500Principal p) {
        try {
            for (Rdn r : new LdapName(p.getName()).getRdns()) {
                if (r.getType().equalsIgnoreCase("CN")) {
                    return r.getValue().toString();
                }
            }
        } catch (InvalidNameException e) {
            return null;
        }
        return null;
    }
}
