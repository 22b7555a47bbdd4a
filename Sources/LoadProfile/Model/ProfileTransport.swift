/// Which transport a profile's sessions connect over (`transport:` in the profile): the run's
/// endpoints of that transport only, spread by weight among those (`ProfileEndpoints`).
///
/// `any` (the default) takes every endpoint of the run, as a profile without the key always did;
/// `tcp` takes `HOST:PORT` endpoints, `webSocket` the `ws://` and `wss://` ones, `bosh` the `http://`
/// and `https://` ones. The raw values are what the profile says.
public enum ProfileTransport: String, Sendable, Hashable, CaseIterable {
    case any
    case tcp
    case webSocket = "websocket"
    case bosh

    /// True when a session of this profile may connect over `transport`.
    public func allows(_ transport: EndpointTransport) -> Bool {
        switch (self, transport) {
        case (.any, _), (.tcp, .tcp), (.webSocket, .webSocket), (.bosh, .bosh): return true
        default: return false
        }
    }

    /// What to add to a run that has no endpoint for this transport, as a `--server` example.
    public var endpointExample: String {
        switch self {
        case .any, .tcp: return "HOST:5222"
        case .webSocket: return "ws://HOST:5280/xmpp-websocket"
        case .bosh: return "http://HOST:5280/http-bind"
        }
    }
}
