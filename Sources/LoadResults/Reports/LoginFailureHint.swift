// What to do about logins that failed in a given phase, from the phase and the error kinds seen there.

/// One sentence per login phase saying what a failure there usually means and what to do, shown
/// beside `login_failures` in the text report (the console at the end of `run`) and report.html.
///
/// The kinds seen in the phase sharpen it: `sasl` with `sasl-not-authorized` is a wrong password or a
/// missing account, not a slow server; a `bind` that timed out is jabberd2's silence on a stream that
/// has just registered (or a session manager that is down).
public enum LoginFailureHint {
    public static func hint(phase: String, kinds: [String: UInt64]) -> String? {
        let timedOut = kinds["timeout-login", default: 0] > 0
        let refused = kinds.keys.contains { $0.hasPrefix("connect-") || $0 == "network-unreachable" }
        switch phase {
        case "connect":
            if refused {
                return
                    "the TCP connect failed: is the server up on --server's host and port (scripts/local-server status), and is its accept backlog big enough for the arrival rate?"
            }
            return
                "the TCP connection was not established in time: the server is down, filtered, or its accept backlog is full (lower --rate, or raise the server's backlog)"
        case "tls":
            return
                "STARTTLS or the TLS handshake failed: check the server's certificate (--insecure for a lab server) and TLS versions; --tls none for a plaintext server"
        case "features":
            return
                "the server sent no <stream:features> after our stream header: check --domain is a host the server serves, and the server's logs for the stream"
        case "register":
            return
                "in-band registration failed: enable it on the server (Prosody allow_registration, ejabberd mod_register), or create the accounts with `xmppload provision` or the server's own tools"
        case "sasl":
            if kinds["sasl-not-authorized", default: 0] > 0 {
                return
                    "wrong password or account missing: check --password and --accounts against the server, or create the accounts with `xmppload provision`"
            }
            if kinds.keys.contains(where: { $0.hasPrefix("sasl-mechanism") || $0 == "sasl-no-common-mechanism" }) {
                return "no SASL mechanism both sides can use: see the example's offered mechanisms, and --sasl"
            }
            if timedOut {
                return
                    "the SASL exchange got no <success/> or <failure/> in time: the server's authentication backend is slow or overloaded (lower --rate)"
            }
            return "authentication failed: see the error kinds and the forensics (forensics.json) for the server's <failure/>"
        case "bind":
            if timedOut {
                return
                    "the server authenticated the account but answered no resource bind: jabberd2 does not answer bind on a stream that just registered (log in on a fresh stream, as `xmppload provision` does) or when its sm is down or lacks <auto-create/>"
            }
            return "the server refused the resource bind: see the error kinds (a conflict or a policy on resources)"
        case "session":
            return "the server did not establish the RFC 3921 session it asked for: see its answer in forensics.json"
        case "resume":
            return
                "the XEP-0198 resumption got no <resumed/> or <failed/>: the server lost the session or runs it on another node (resumption works only on the original node)"
        default:
            return nil
        }
    }
}
