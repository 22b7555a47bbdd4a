import LoadProfile
import NIOCore
import NIOPosix

// The addresses of XEP-0198 resumption locations, looked up off the event loop, once per loop.

/// The addresses of the `location`s servers name for stream resumption (XEP-0198), for one event
/// loop's connector. An IP literal is parsed at once; a host name is looked up on NIO's
/// blocking-work thread pool, never on the loop: the sessions that need it wait (their login timeout
/// keeps running) and continue on the loop when the answer is in. Each distinct location is looked
/// up once per loop and remembered; one that does not parse or resolve is remembered as nil (the
/// session resumes at its own endpoint). Loop-bound.
final class ResumeLocations {
    /// What `address(of:defaultPort:then:)` knows now.
    enum Lookup {
        /// The location's address; nil: it does not parse or resolve.
        case known(SocketAddress?)
        /// Being looked up; the caller's continuation runs on the loop when it is known.
        case pending
    }

    private let eventLoop: any EventLoop
    private let resolver: EndpointResolver
    private var known: [String: SocketAddress?] = [:]
    private var waiting: [String: [() -> Void]] = [:]

    init(eventLoop: any EventLoop, resolver: EndpointResolver) {
        self.eventLoop = eventLoop
        self.resolver = resolver
    }

    /// The address of `location` if known; else starts its lookup (unless one is under way) and
    /// calls `then` on the loop once it is known.
    func address(of location: String, defaultPort: Int, then: @escaping () -> Void) -> Lookup {
        if let address = known[location] { return .known(address) }
        guard let endpoint = Self.endpoint(of: location, defaultPort: defaultPort) else {
            known[location] = .some(nil)
            return .known(nil)
        }
        if let literal = EndpointResolver.literal(endpoint.host, port: endpoint.port) {
            known[location] = literal
            return .known(literal)
        }
        if waiting[location] != nil {
            waiting[location]!.append(then)
            return .pending
        }
        waiting[location] = [then]
        let resolver = self.resolver
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        NIOThreadPool.singleton.runIfActive(eventLoop: eventLoop) {
            try resolver.resolve(endpoint.host, endpoint.port)
        }.whenComplete { result in
            bound.value.learned(location, address: try? result.get())
        }
        return .pending
    }

    private func learned(_ location: String, address: SocketAddress?) {
        known[location] = .some(address)
        for next in waiting.removeValue(forKey: location) ?? [] { next() }
    }

    /// A resumption `location` ("host", "host:port", "[v6]:port" or a bare IPv6 address;
    /// `defaultPort` when it names none) as an endpoint, parsed as `--server` endpoints are
    /// (`WeightedEndpoint.parse`); nil when it does not parse.
    static func endpoint(of location: String, defaultPort: Int) -> WeightedEndpoint? {
        let colons = location.filter { $0 == ":" }.count
        let text: String
        if location.hasPrefix("[") {
            text = location.contains("]:") ? location : "\(location):\(defaultPort)"
        } else {
            text = colons > 1 ? "[\(location)]:\(defaultPort)" : colons == 1 ? location : "\(location):\(defaultPort)"
        }
        guard case .success(let endpoint) = WeightedEndpoint.parse(text) else { return nil }
        return endpoint
    }
}
