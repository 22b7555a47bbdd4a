import Testing

@testable import LoadProfile

/// `--server` URLs for the web transports: WebSocket (`ws://`, `wss://`) and BOSH (`http://`,
/// `https://`), with default ports and paths, weights, and the problems reported for bad ones.
@Suite struct WebEndpointTests {
    @Test(arguments: [
        (
            "ws://127.0.0.1:5280/xmpp-websocket",
            WeightedEndpoint(host: "127.0.0.1", port: 5280, transport: .webSocket(secure: false, path: "/xmpp-websocket"))
        ),
        ("wss://chat.example/ws/", WeightedEndpoint(host: "chat.example", port: 443, transport: .webSocket(secure: true, path: "/ws/"))),
        (
            "http://127.0.0.1:7070/http-bind/,weight=3",
            WeightedEndpoint(host: "127.0.0.1", port: 7070, weight: 3, transport: .bosh(secure: false, path: "/http-bind/"))
        ),
        ("HTTPS://[::1]/http-bind", WeightedEndpoint(host: "::1", port: 443, transport: .bosh(secure: true, path: "/http-bind"))),
        ("ws://[::1]:5280", WeightedEndpoint(host: "::1", port: 5280, transport: .webSocket(secure: false, path: "/"))),
        ("http://h", WeightedEndpoint(host: "h", port: 80, transport: .bosh(secure: false, path: "/"))),
        ("127.0.0.1:5222", WeightedEndpoint(host: "127.0.0.1", port: 5222, transport: .tcp)),
    ])
    func parsesURLs(text: String, expected: WeightedEndpoint) throws {
        #expect(try WeightedEndpoint.parse(text).get() == expected)
    }

    @Test(arguments: [
        ("ftp://h/x", "unknown scheme 'ftp'"),
        ("ws:///xmpp", "has no valid host"),
        ("ws://h:0/x", "is not HOST:PORT"),
        ("http://h/bind?x=1", "must not contain spaces, '?' or '#'"),
        ("ws://h/x,weight=0", "weight must be an integer"),
    ])
    func rejectsBadURLs(text: String, message: String) {
        guard case .failure(let error) = WeightedEndpoint.parse(text) else {
            Issue.record("'\(text)' parsed")
            return
        }
        #expect(error.message.contains(message), "\(error.message)")
    }

    /// What is printed (manifest, plan) parses back to the same endpoint.
    @Test(arguments: ["ws://127.0.0.1:5280/xmpp-websocket", "https://h:443/http-bind/,weight=2", "[::1]:5222", "wss://[::1]:443/"])
    func descriptionRoundTrips(text: String) throws {
        let endpoint = try WeightedEndpoint.parse(text).get()
        #expect(endpoint.description == text)
        #expect(try WeightedEndpoint.parse(endpoint.description).get() == endpoint)
    }

    @Test func transportProperties() {
        let rows: [(EndpointTransport, String, Bool, Bool, String?)] = [
            (.tcp, "tcp", false, false, nil),
            (.webSocket(secure: false, path: "/ws"), "websocket", true, false, "ws"),
            (.webSocket(secure: true, path: "/ws"), "websocket", true, true, "wss"),
            (.bosh(secure: false, path: "/b"), "bosh", true, false, "http"),
            (.bosh(secure: true, path: "/b"), "bosh", true, true, "https"),
        ]
        for (transport, name, isWeb, isSecure, scheme) in rows {
            #expect(transport.name == name)
            #expect(transport.isWeb == isWeb)
            #expect(transport.isSecure == isSecure)
            #expect(transport.scheme == scheme)
        }
    }
}
