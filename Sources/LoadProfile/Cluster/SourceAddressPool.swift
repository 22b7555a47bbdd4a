/// The local source addresses outgoing connections bind to (`--source`), handed out round robin:
/// connection n binds to `address(forConnection: n)`. Every 127.x.y.z address is a separate source
/// with its own ~28k ephemeral ports, so a pool multiplies the connections one generator can open.
///
/// Parsed from a comma-separated list whose items are addresses (`127.0.0.2`, `::1`) or inclusive
/// IPv4 ranges (`127.0.0.2-127.0.0.9`). Invariants: at least one address, no duplicates, at most
/// `maximumCount` addresses, all in one family (a connection binds to an address of the server's
/// family).
public struct SourceAddressPool: Sendable, Equatable, CustomStringConvertible {
    /// The addresses in the order given, ranges expanded.
    public let addresses: [String]

    public static let maximumCount = 65_536

    /// Every problem of the text at once (one message each).
    public init(parsing text: String) throws(SourceAddressErrors) {
        var problems: [String] = []
        var addresses: [String] = []
        var seen = Set<String>()
        var families = Set<Int>()
        let items = text.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingCharacters(in: " ") }
        for item in items {
            if item.isEmpty {
                problems.append("--source '\(text)': an empty item")
                continue
            }
            if let dash = item.firstIndex(of: "-") {
                let firstText = String(item[..<dash])
                let lastText = String(item[item.index(after: dash)...])
                guard let first = IPv4(firstText), let last = IPv4(lastText) else {
                    problems.append("--source: '\(item)' is not a range of IPv4 addresses FIRST-LAST")
                    continue
                }
                guard first.value <= last.value else {
                    problems.append("--source: range '\(item)' ends before it starts")
                    continue
                }
                guard Int(last.value - first.value) < Self.maximumCount else {
                    problems.append("--source: range '\(item)' has more than \(Self.maximumCount) addresses")
                    continue
                }
                families.insert(4)
                for value in first.value...last.value {
                    let address = IPv4(value: value).description
                    if seen.insert(address).inserted { addresses.append(address) } else { problems.append("--source: \(address) appears twice") }
                }
            } else if let address = IPv4(item) {
                families.insert(4)
                if seen.insert(address.description).inserted {
                    addresses.append(address.description)
                } else {
                    problems.append("--source: \(item) appears twice")
                }
            } else if Self.isIPv6(item) {
                families.insert(6)
                if seen.insert(item).inserted { addresses.append(item) } else { problems.append("--source: \(item) appears twice") }
            } else {
                problems.append("--source: '\(item)' is not an IP address or an IPv4 range FIRST-LAST")
            }
        }
        if families.count > 1 { problems.append("--source: mixes IPv4 and IPv6 addresses; a connection binds to one of the server's family") }
        if addresses.count > Self.maximumCount { problems.append("--source: more than \(Self.maximumCount) addresses") }
        guard problems.isEmpty else { throw SourceAddressErrors(messages: problems) }
        self.addresses = addresses
    }

    /// The source address of the n-th connection (0-based).
    public func address(forConnection index: Int) -> String {
        addresses[Int(UInt(bitPattern: index) % UInt(addresses.count))]
    }

    public var description: String {
        addresses.count <= 4 ? addresses.joined(separator: ",") : "\(addresses[0])…\(addresses[addresses.count - 1]) (\(addresses.count) addresses)"
    }

    /// A dotted-quad IPv4 address as a 32-bit value.
    struct IPv4: CustomStringConvertible {
        var value: UInt32
        init(value: UInt32) { self.value = value }
        init?(_ text: String) {
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 4 else { return nil }
            var value: UInt32 = 0
            for part in parts {
                guard !part.isEmpty, part.count <= 3, part.allSatisfy(\.isASCII), let octet = UInt32(part), octet <= 255,
                    part.count == 1 || part.first != "0"
                else { return nil }
                value = value << 8 | octet
            }
            self.value = value
        }
        var description: String { "\(value >> 24).\(value >> 16 & 255).\(value >> 8 & 255).\(value & 255)" }
    }

    /// A textual IPv6 address: hex groups of at most 4 digits separated by ':', at most one '::'.
    static func isIPv6(_ text: String) -> Bool {
        guard text.contains(":"), text.allSatisfy({ $0.isHexDigit || $0 == ":" }) else { return false }
        let compressed = text.components(separatedByString: "::")
        guard compressed.count <= 2 else { return false }
        var groups = 0
        for part in compressed where !part.isEmpty {
            let fields = part.split(separator: ":", omittingEmptySubsequences: false)
            guard fields.allSatisfy({ !$0.isEmpty && $0.count <= 4 }) else { return false }
            groups += fields.count
        }
        return compressed.count == 2 ? groups <= 7 : groups == 8
    }
}

/// Every problem of a `--source` value, one message each.
public struct SourceAddressErrors: Error, Sendable, Equatable, CustomStringConvertible {
    public var messages: [String]
    public init(messages: [String]) { self.messages = messages }
    public var description: String { messages.joined(separator: "\n") }
}

extension String {
    func components(separatedByString separator: String) -> [Substring] {
        var parts: [Substring] = []
        var rest = self[...]
        while let range = rest.firstRange(of: separator) {
            parts.append(rest[..<range.lowerBound])
            rest = rest[range.upperBound...]
        }
        parts.append(rest)
        return parts
    }
}
