/// How a session reaches its server endpoint: the layer under the XMPP stream.
///
/// `tcp` is a plain XMPP c2s connection (`HOST:PORT`; TLS by STARTTLS or direct, as `--tls` says).
/// The web transports carry the stream over HTTP and bring their own security: `webSocket` is RFC 7395
/// (`ws://` or `wss://`), `bosh` is XEP-0124/0206 (`http://` or `https://`); for both, `secure` means
/// TLS under HTTP (wss/https), and the XMPP login never does STARTTLS (the transport decides).
/// `path` is the HTTP request target, starting with `/`.
public enum EndpointTransport: Sendable, Hashable {
    case tcp
    case webSocket(secure: Bool, path: String)
    case bosh(secure: Bool, path: String)

    /// The transport's short name in reports and metrics: `tcp`, `websocket`, `bosh`.
    public var name: String {
        switch self {
        case .tcp: return "tcp"
        case .webSocket: return "websocket"
        case .bosh: return "bosh"
        }
    }

    /// True for WebSocket and BOSH: the stream's security is the transport's, never STARTTLS.
    public var isWeb: Bool {
        if case .tcp = self { return false }
        return true
    }

    /// True when TLS runs under HTTP (`wss://`, `https://`).
    public var isSecure: Bool {
        switch self {
        case .tcp: return false
        case .webSocket(let secure, _), .bosh(let secure, _): return secure
        }
    }

    /// The HTTP request target (`/` for TCP, where it has no meaning).
    public var path: String {
        switch self {
        case .tcp: return "/"
        case .webSocket(_, let path), .bosh(_, let path): return path
        }
    }

    /// The URL scheme (`ws`, `wss`, `http`, `https`), nil for TCP.
    public var scheme: String? {
        switch self {
        case .tcp: return nil
        case .webSocket(let secure, _): return secure ? "wss" : "ws"
        case .bosh(let secure, _): return secure ? "https" : "http"
        }
    }

    /// The transport and default port for a URL scheme (case-insensitive), nil for any other scheme.
    static func forScheme(_ scheme: String, path: String) -> (transport: EndpointTransport, defaultPort: Int)? {
        switch scheme.lowercased() {
        case "ws": return (.webSocket(secure: false, path: path), 80)
        case "wss": return (.webSocket(secure: true, path: path), 443)
        case "http": return (.bosh(secure: false, path: path), 80)
        case "https": return (.bosh(secure: true, path: path), 443)
        default: return nil
        }
    }
}
