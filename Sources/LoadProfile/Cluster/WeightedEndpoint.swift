/// One server endpoint a session may connect to: a host (IP literal or name) and a c2s port, with a
/// weight (its share of the sessions among endpoints of the same priority) and a priority (lower is
/// preferred; endpoints of a higher priority value are fallbacks, as in DNS SRV, RFC 2782).
///
/// Parsed from `HOST:PORT[,weight=W]` (`--server`, `XMPPLOAD_SERVERS`), where W is an integer
/// 1...10,000 (default 1), or made from SRV records (weights 0...65,535). IPv6 hosts are written in
/// brackets: `[::1]:5222`. A URL selects a web transport (`transport`): `ws://HOST[:PORT]/PATH` or
/// `wss://…` for XMPP over WebSocket (RFC 7395), `http://HOST[:PORT]/PATH` or `https://…` for BOSH
/// (XEP-0206); the port defaults to 80 or 443 and the path to `/`. Endpoints of different transports
/// may be mixed in one run.
public struct WeightedEndpoint: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    /// Relative share among the endpoints of the same priority; 0 only from SRV records.
    public var weight: Int
    /// Lower is preferred (SRV priority); `--server` endpoints all have priority 0.
    public var priority: Int
    /// The layer under the XMPP stream: plain TCP, WebSocket or BOSH.
    public var transport: EndpointTransport

    public init(host: String, port: Int, weight: Int = 1, priority: Int = 0, transport: EndpointTransport = .tcp) {
        self.host = host
        self.port = port
        self.weight = weight
        self.priority = priority
        self.transport = transport
    }

    /// The largest weight `--server` accepts.
    public static let maximumWeight = 10_000

    /// `host:port` (IPv6 in brackets) or, for a web transport, its URL; with `,weight=W` when the
    /// weight is not 1.
    public var description: String {
        var address = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        if let scheme = transport.scheme { address = "\(scheme)://\(address)\(transport.path)" }
        return weight == 1 ? address : "\(address),weight=\(weight)"
    }

    /// Parses `HOST:PORT[,weight=W]` or `URL[,weight=W]`, or fails with a message naming the problem.
    public static func parse(_ text: String) -> Result<WeightedEndpoint, EndpointSyntaxError> {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        var address = parts[0].trimmingCharacters(in: " ")
        var weight = 1
        for (index, option) in parts.dropFirst().enumerated() {
            let pair = option.split(separator: "=", maxSplits: 1).map { String($0).trimmingCharacters(in: " ") }
            guard pair.count == 2, pair[0] == "weight" else {
                return .failure(EndpointSyntaxError("'\(text)': unknown option '\(option)' (only weight=W)"))
            }
            guard index == 0 else { return .failure(EndpointSyntaxError("'\(text)': the weight is given more than once")) }
            guard let value = Int(pair[1]), (1...maximumWeight).contains(value) else {
                return .failure(EndpointSyntaxError("'\(text)': weight must be an integer 1...\(maximumWeight), got '\(pair[1])'"))
            }
            weight = value
        }
        var transport = EndpointTransport.tcp
        if let schemeEnd = address.range(of: "://") {
            let scheme = String(address[..<schemeEnd.lowerBound])
            var rest = address[schemeEnd.upperBound...]
            let path = rest.firstIndex(of: "/").map { String(rest[$0...]) } ?? "/"
            rest = rest.prefix { $0 != "/" }
            guard let (chosen, defaultPort) = EndpointTransport.forScheme(scheme, path: path) else {
                return .failure(EndpointSyntaxError("'\(text)': unknown scheme '\(scheme)' (ws, wss, http, https, or HOST:PORT for TCP)"))
            }
            guard !path.contains(where: { $0 == " " || $0 == "?" || $0 == "#" }) else {
                return .failure(EndpointSyntaxError("'\(text)': the path must not contain spaces, '?' or '#'"))
            }
            transport = chosen
            let hasPort = rest.hasPrefix("[") ? rest.contains("]:") : rest.contains(":")
            address = hasPort ? String(rest) : "\(rest):\(defaultPort)"
        }
        guard let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...]),
            (1...65535).contains(port)
        else {
            return .failure(EndpointSyntaxError("'\(text)' is not HOST:PORT[,weight=W] with a port 1-65535"))
        }
        var host = String(address[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") {
            host = String(host.dropFirst().dropLast())
        } else if host.contains(":") {
            return .failure(EndpointSyntaxError("'\(text)': write an IPv6 host in brackets, e.g. [::1]:5222"))
        }
        guard !host.isEmpty, !host.contains(where: { $0 == " " || $0 == "/" }) else {
            return .failure(EndpointSyntaxError("'\(text)' has no valid host"))
        }
        return .success(WeightedEndpoint(host: host, port: port, weight: weight, transport: transport))
    }
}

/// A `--server` value that is neither `HOST:PORT[,weight=W]` nor a web transport URL; `message` says why.
public struct EndpointSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

extension String {
    func trimmingCharacters(in character: Character) -> String {
        var text = Substring(self)
        while text.first == character { text = text.dropFirst() }
        while text.last == character { text = text.dropLast() }
        return String(text)
    }
}
