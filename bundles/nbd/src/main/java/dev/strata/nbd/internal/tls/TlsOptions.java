package dev.strata.nbd.internal.tls;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;

/** Protocol versions every Strata TLS socket uses: TLS 1.3 preferred, TLS 1.2 the minimum. */
public final class TlsOptions {
    static final List<String> PROTOCOLS = List.of("TLSv1.3", "TLSv1.2");

    private final boolean needClientAuth;

    public TlsOptions(boolean needClientAuth) {
        this.needClientAuth = needClientAuth;
    }

    void apply(SSLSocket s) {
        SSLParameters p = s.getSSLParameters();
        p.setProtocols(protocols(s));
        p.setNeedClientAuth(needClientAuth);
        // the server's cipher-suite order, not the client's: JSSE's default list is ordered strongest first
        p.setUseCipherSuitesOrder(true);
        s.setSSLParameters(p);
    }

    /**
     * A client socket: the same versions, SNI for {@code hostname}, and the server's certificate
     * must name it (HTTPS-style: a DNS name or IP address in the subject alternative names).
     */
    static void client(SSLSocket s, String hostname) {
        SSLParameters p = s.getSSLParameters();
        p.setProtocols(protocols(s));
        p.setEndpointIdentificationAlgorithm("HTTPS");
        if (!hostname.isEmpty() && !hostname.contains(":") && !hostname.matches("[0-9.]+")) {
            p.setServerNames(List.of(new javax.net.ssl.SNIHostName(hostname)));
        }
        s.setSSLParameters(p);
    }

    private static String[] protocols(SSLSocket s) {
        List<String> supported = Arrays.asList(s.getSupportedProtocols());
        List<String> use = new ArrayList<>();
        for (String p : PROTOCOLS) {
            if (supported.contains(p)) {
                use.add(p);
            }
        }
        return use.toArray(String[]::new);
    }
}
