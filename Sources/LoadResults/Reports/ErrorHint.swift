/// What a user can do about an error kind: one sentence naming the flag or setting involved, shown
/// under the kind in the text report and report.html (nil for kinds without a known remedy).
///
/// Keys are the stable kinds of `SessionError`, `XMPPStreamError` and `SASLError` (docs/HARDENING.md).
public enum ErrorHint {
    public static func hint(for kind: String) -> String? {
        switch kind {
        case "tls-certificate-self-signed":
            return
                "the server's certificate is self-signed or from a private CA: use --insecure for a lab server, or add the CA to the system trust store"
        case "tls-certificate-expired":
            return "the server's certificate (or one in its chain) has expired: renew it, or use --insecure for a lab server"
        case "tls-certificate-not-yet-valid":
            return "the server's certificate is not valid yet: check the clocks of both hosts, or use --insecure for a lab server"
        case "tls-certificate-untrusted":
            return "the server's certificate chain does not lead to a trusted root: send the full chain, or use --insecure for a lab server"
        case "tls-certificate-hostname-mismatch":
            return
                "the server's certificate is not for --domain (an IP-address domain needs an IP subjectAltName): fix the certificate, or use --insecure for a lab server"
        case "tls":
            return
                "the TLS handshake failed (protocol or cipher mismatch, or the server closed it): check the server's TLS settings; --tls none for a plaintext server"
        case "tls-not-offered":
            return "the server did not offer STARTTLS: enable it, or pass --tls none to log in over plaintext on purpose"
        case "sasl-iteration-count":
            return "the server asked for more SCRAM iterations than --max-scram-iterations allows (or a malformed count)"
        case "xml-limit-element-size":
            return "a stanza or stream header was larger than --max-element-size"
        case "xml-limit-buffer":
            return "more unframed bytes than --max-buffered were buffered"
        case "xml-limit-depth":
            return "elements nested deeper than --max-depth"
        case "xml-limit-attributes":
            return "a start tag had more attributes than --max-attributes"
        case "xml-limit-namespaces":
            return "the stream header declared more namespaces than --max-header-namespaces"
        case "bosh-unanswered":
            return
                "the BOSH server did not answer every request at logout (XEP-0124 §13: it answers the held request and the terminate): check a proxy's timeouts between us and the server"
        case "timeout-login":
            return
                "the login did not finish within the login step's timeout; the example says the phase it was stuck in: connect (server down or its accept backlog full), tls/features/sasl (the server is slow or overloaded), bind (the server did not start the session: jabberd2's sm needs <auto-create/> for accounts it did not register, and answers no bind on a stream that has just registered)"
        case "sasl-mechanism-not-offered":
            return
                "the mechanism forced with --sasl (or the profile's sasl:) is not offered by the server: pass one the example lists as usable, or drop --sasl to use the strongest"
        case "sasl-no-common-mechanism":
            return
                "the server offers no mechanism xmppload can use (SCRAM-SHA-512/-256/-1 with or without -PLUS, PLAIN; not DIGEST-MD5, CRAM-MD5 or X-OAUTH2): enable SCRAM or PLAIN on the server"
        case "register-not-acceptable", "register-bad-request":
            return
                "the server refused the registration form: it likely asks for more than username and password (e-mail, CAPTCHA, a token); create the accounts another way"
        case "register-not-allowed":
            return
                "the server does not allow in-band registration from here (disabled, or throttled per address): enable it for the test, or create the accounts another way"
        case "muc-remote-server-not-found", "muc-service-unavailable", "muc-item-not-found":
            return
                "the room's MUC service does not exist here (no multi-user chat component, or it has another name): enable MUC on the server, or set the step's service: (default conference.<domain>); `xmppload probe` lists the services the server names"
        case "write-stalled":
            return "the server stopped reading our data for longer than --write-stall"
        default:
            return nil
        }
    }
}
