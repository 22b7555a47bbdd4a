import LoadProfile

/// The few DNS messages xmppload needs (RFC 1035, RFC 2782, RFC 3596), as pure functions over bytes:
/// a one-question query, and the answer and additional sections of a response decoded into SRV, A
/// and AAAA records (names decompressed; other record types skipped).
///
/// Contract: `decode` never traps on hostile input — every length and pointer is checked, a
/// compression loop is cut after 64 jumps — and throws `DNSMessageError` instead.
public struct DNSMessage: Sendable, Equatable {
    /// Query types used here.
    public enum RecordType: UInt16, Sendable {
        case a = 1
        case cname = 5
        case aaaa = 28
        case srv = 33
    }

    /// One decoded resource record.
    public enum Record: Sendable, Equatable {
        case srv(name: String, SRVRecord)
        /// An IPv4 or IPv6 address in its textual form.
        case address(name: String, String)
    }

    public var id: UInt16
    /// RCODE: 0 no error, 2 server failure, 3 name error (NXDOMAIN), ...
    public var responseCode: UInt8
    public var truncated: Bool
    public var records: [Record]

    public init(id: UInt16, responseCode: UInt8 = 0, truncated: Bool = false, records: [Record] = []) {
        self.id = id
        self.responseCode = responseCode
        self.truncated = truncated
        self.records = records
    }

    /// A standard query with recursion desired for `name` (dots between labels, no trailing dot
    /// needed). Throws when a label is empty or longer than 63 bytes, or the name longer than 255.
    public static func query(id: UInt16, name: String, type: RecordType) throws(DNSMessageError) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(id >> 8), UInt8(id & 0xFF), 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]
        let trimmed = name.hasSuffix(".") ? String(name.dropLast()) : name
        var length = 1
        for label in trimmed.split(separator: ".", omittingEmptySubsequences: false) {
            let utf8 = Array(label.utf8)
            guard !utf8.isEmpty, utf8.count <= 63 else { throw DNSMessageError.badName(name) }
            bytes.append(UInt8(utf8.count))
            bytes += utf8
            length += utf8.count + 1
        }
        guard length <= 255 else { throw DNSMessageError.badName(name) }
        bytes += [0, UInt8(type.rawValue >> 8), UInt8(type.rawValue & 0xFF), 0, 1]
        return bytes
    }

    /// Decodes a response: header, skips the questions, decodes answer and additional records.
    public static func decode(_ bytes: [UInt8]) throws(DNSMessageError) -> DNSMessage {
        var reader = Reader(bytes: bytes)
        let id = try reader.uint16()
        let flags = try reader.uint16()
        guard flags & 0x8000 != 0 else { throw DNSMessageError.malformed("not a response") }
        let questions = try reader.uint16()
        let answers = try reader.uint16()
        let authorities = try reader.uint16()
        let additionals = try reader.uint16()
        for _ in 0..<questions {
            _ = try reader.name()
            try reader.skip(4)
        }
        var records: [Record] = []
        for section in 0..<3 {
            let count = [answers, authorities, additionals][section]
            for _ in 0..<count {
                let name = try reader.name()
                let type = try reader.uint16()
                try reader.skip(6)  // class, TTL
                let length = Int(try reader.uint16())
                let end = reader.offset + length
                guard end <= bytes.count else { throw DNSMessageError.malformed("record data past the end") }
                if section != 1 {
                    switch RecordType(rawValue: type) {
                    case .srv:
                        let priority = try reader.uint16()
                        let weight = try reader.uint16()
                        let port = try reader.uint16()
                        let target = try reader.name()
                        records.append(
                            .srv(name: name, SRVRecord(priority: priority, weight: weight, port: port, target: target.isEmpty ? "." : target)))
                    case .a:
                        guard length == 4 else { throw DNSMessageError.malformed("A record of \(length) bytes") }
                        records.append(.address(name: name, bytes[reader.offset..<end].map(String.init).joined(separator: ".")))
                    case .aaaa:
                        guard length == 16 else { throw DNSMessageError.malformed("AAAA record of \(length) bytes") }
                        records.append(.address(name: name, Self.ipv6Text(Array(bytes[reader.offset..<end]))))
                    default:
                        break
                    }
                }
                reader.offset = end
            }
        }
        return DNSMessage(id: id, responseCode: UInt8(flags & 0x0F), truncated: flags & 0x0200 != 0, records: records)
    }

    /// RFC 5952 text: lowercase hex, the longest run (2 or more) of zero groups as "::".
    static func ipv6Text(_ bytes: [UInt8]) -> String {
        let groups = stride(from: 0, to: 16, by: 2).map { UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]) }
        var bestStart = -1
        var bestLength = 0
        var index = 0
        while index < 8 {
            if groups[index] == 0 {
                var end = index
                while end < 8 && groups[end] == 0 { end += 1 }
                if end - index > bestLength {
                    bestStart = index
                    bestLength = end - index
                }
                index = end
            } else {
                index += 1
            }
        }
        let hex = groups.map { String($0, radix: 16) }
        guard bestLength >= 2 else { return hex.joined(separator: ":") }
        return hex[..<bestStart].joined(separator: ":") + "::" + hex[(bestStart + bestLength)...].joined(separator: ":")
    }

    /// A bounds-checked cursor over the message.
    struct Reader {
        let bytes: [UInt8]
        var offset = 0

        mutating func uint16() throws(DNSMessageError) -> UInt16 {
            guard offset + 2 <= bytes.count else { throw DNSMessageError.malformed("message ends early") }
            defer { offset += 2 }
            return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
        }

        mutating func skip(_ count: Int) throws(DNSMessageError) {
            guard offset + count <= bytes.count else { throw DNSMessageError.malformed("message ends early") }
            offset += count
        }

        /// A possibly compressed name, without the trailing dot ("" for the root).
        mutating func name() throws(DNSMessageError) -> String {
            var labels: [String] = []
            var position = offset
            var jumped = false
            var jumps = 0
            while true {
                guard position < bytes.count else { throw DNSMessageError.malformed("name past the end") }
                let length = Int(bytes[position])
                if length & 0xC0 == 0xC0 {
                    guard position + 1 < bytes.count else { throw DNSMessageError.malformed("pointer past the end") }
                    jumps += 1
                    guard jumps <= 64 else { throw DNSMessageError.malformed("compression loop") }
                    if !jumped { offset = position + 2 }
                    jumped = true
                    position = (length & 0x3F) << 8 | Int(bytes[position + 1])
                } else if length == 0 {
                    if !jumped { offset = position + 1 }
                    return labels.joined(separator: ".")
                } else {
                    guard length <= 63, position + 1 + length <= bytes.count else { throw DNSMessageError.malformed("bad label") }
                    labels.append(String(decoding: bytes[(position + 1)...(position + length)], as: UTF8.self))
                    position += 1 + length
                }
            }
        }
    }
}

/// Why a DNS message could not be built or read.
public enum DNSMessageError: Error, Sendable, Equatable, CustomStringConvertible {
    case badName(String)
    case malformed(String)

    public var description: String {
        switch self {
        case .badName(let name): return "'\(name)' is not a valid DNS name"
        case .malformed(let reason): return "malformed DNS response: \(reason)"
        }
    }
}
