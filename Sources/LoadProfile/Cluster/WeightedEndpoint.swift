/// One server endpoint a session may connect to: a host (IP literal or name) and a c2s port, with a
/// weight (its share of the sessions among endpoints of the same priority) and a priority (lower is
/// preferred; endpoints of a higher priority value are fallbacks, as in DNS SRV, RFC 2782).
///
/// Parsed from `HOST:PORT[,weight=W]` (`--server`, `XMPPLOAD_SERVERS`), where W is an integer
/// 1...10,000 (default 1), or made from SRV records (weights 0...65,535). IPv6 hosts are written in
/// brackets: `[::1]:5222`.
public struct WeightedEndpoint: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    /// Relative share among the endpoints of the same priority; 0 only from SRV records.
    public var weight: Int
    /// Lower is preferred (SRV priority); `--server` endpoints all have priority 0.
    public var priority: Int

    public init(host: String, port: Int, weight: Int = 1, priority: Int = 0) {
        self.host = host
        self.port = port
        self.weight = weight
        self.priority = priority
    }

    /// The largest weight `--server` accepts.
    public static let maximumWeight = 10_000

    /// `host:port` (IPv6 in brackets), with `,weight=W` when the weight is not 1.
    public var description: String {
        let address = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        return weight == 1 ? address : "\(address),weight=\(weight)"
    }

    /// Parses `HOST:PORT[,weight=W]`, or fails with a message naming the problem.
    public static func parse(_ text: String) -> Result<WeightedEndpoint, EndpointSyntaxError> {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        let address = parts[0].trimmingCharacters(in: " ")
        var weight = 1
        for option in parts.dropFirst() {
            let pair = option.split(separator: "=", maxSplits: 1).map { String($0).trimmingCharacters(in: " ") }
            guard pair.count == 2, pair[0] == "weight" else {
                return .failure(EndpointSyntaxError("'\(text)': unknown option '\(option)' (only weight=W)"))
            }
            guard let value = Int(pair[1]), (1...maximumWeight).contains(value) else {
                return .failure(EndpointSyntaxError("'\(text)': weight must be an integer 1...\(maximumWeight), got '\(pair[1])'"))
            }
            weight = value
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
        return .success(WeightedEndpoint(host: host, port: port, weight: weight))
    }
}

/// A `--server` value that is not `HOST:PORT[,weight=W]`; `message` says why.
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
