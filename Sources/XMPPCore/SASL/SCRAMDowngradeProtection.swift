/// XEP-0474 (SASL SCRAM Downgrade Protection): what the client saw offered — the mechanism list of
/// the SASL profile it authenticates with (SASL1 `<mechanisms/>` or SASL2 `<authentication/>`) and
/// the XEP-0440 channel-binding types (nil when the server did not advertise any) — so it can check
/// the hash a server puts into its SCRAM server-first message. The hash is signed by the SCRAM
/// exchange, so a man in the middle who removed `-PLUS` mechanisms or channel-binding types is caught.
///
/// Two wire forms: XEP-0474 0.4+ (`h=`: sorted names joined by 0x1E, 0x1F before the channel-binding
/// types; ejabberd 24.12), and 0.3 (`d=`: joined by `,`, `|` before the types). Sorting is by octets
/// (RFC 4790 "i;octet"); the hash is the SCRAM mechanism's, base64 on the wire.
public struct SCRAMDowngradeProtection: Sendable, Equatable {
    /// The mechanism names as offered (any order; whitespace around them is dropped when hashing).
    public var mechanisms: [String]
    /// The channel-binding types as advertised, or nil when there was no `<sasl-channel-binding/>`.
    public var channelBindingTypes: [String]?

    public init(mechanisms: [String], channelBindingTypes: [String]?) {
        self.mechanisms = mechanisms
        self.channelBindingTypes = channelBindingTypes
    }

    /// The XEP-0474 0.4+ string (`h=`): mechanisms joined by 0x1E, then 0x1F and the types joined by 0x1E.
    func hashInput(legacy: Bool) -> [UInt8] {
        let separator: UInt8 = legacy ? UInt8(ascii: ",") : 0x1E
        let groupSeparator: UInt8 = legacy ? UInt8(ascii: "|") : 0x1F
        var input = Self.joinedSorted(mechanisms, separator)
        if let channelBindingTypes {
            input.append(groupSeparator)
            input += Self.joinedSorted(channelBindingTypes, separator)
        }
        return input
    }

    /// The hash a server that saw the same lists sends (`h=` form, or `d=` with `legacy`).
    public func expectedHash(_ algorithm: SCRAMAlgorithm, legacy: Bool = false) -> [UInt8] {
        CryptoPrimitives.hash(algorithm, hashInput(legacy: legacy))
    }

    private static func joinedSorted(_ names: [String], _ separator: UInt8) -> [UInt8] {
        let sorted = names.map { Array(trimmed($0).utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
        var out: [UInt8] = []
        for (index, name) in sorted.enumerated() {
            if index > 0 { out.append(separator) }
            out += name
        }
        return out
    }

    private static func trimmed(_ name: String) -> String {
        String(
            name.drop { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }.reversed().drop {
                $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r"
            }.reversed())
    }
}
