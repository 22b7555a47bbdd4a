import Testing

@testable import XMPPCore

/// A stamped message written straight to bytes must be the very stanza its element form writes, on
/// every transport's parent namespace, and parse back to the same stamp.
@Suite struct StampedMessageTests {
    static func stamp(_ variant: Int) -> MessageStamp {
        var stamp = MessageStamp(runID: "20261127-203000-ab12", sender: 7, sequence: 42, sentNanos: 5_000_000_123, intendedNanos: 4_999_000_000)
        switch variant {
        case 1:
            stamp.node = "127.0.0.1:5222"
        case 2:
            stamp.generator = 3
            stamp.sender = .max
            stamp.sequence = .max
            stamp.sentNanos = .max
            stamp.intendedNanos = 0
        case 3:
            stamp.clock = MessageStamp.Clock(wallOrigin: 1_790_000_000_000_000_000)
        case 4:
            stamp.node = "[::1]:5222"
            stamp.generator = 1
            stamp.clock = MessageStamp.Clock(wallOrigin: -5, offset: -1_234_567, uncertainty: 890)
        case 5:
            stamp.clock = MessageStamp.Clock(wallOrigin: .min, offset: .max)
        default:
            break
        }
        return stamp
    }

    static let bodies = ["", "hello", "a & b < c > d ' \" \t\n\r end", "caf\u{E9} \u{1F600}", "\u{1}\u{FFFE}x"]

    @Test(arguments: 0...5, bodies)
    func bytesMatchTheElement(variant: Int, body: String) {
        let message = StampedMessage(to: "user2@load.test", type: "chat", body: body, stamp: Self.stamp(variant))
        for parent in [XMPPNamespace.client, ""] {
            var direct: [UInt8] = []
            message.serialize(into: &direct, parentNamespace: parent)
            var viaElement: [UInt8] = []
            message.element.serialize(into: &viaElement, parentNamespace: parent)
            #expect(String(decoding: direct, as: UTF8.self) == String(decoding: viaElement, as: UTF8.self))
        }
    }

    @Test func escapesTheAddressAndType() {
        let message = StampedMessage(to: "o'brien@x&y", type: "normal", body: "b", stamp: Self.stamp(0))
        var bytes: [UInt8] = []
        message.serialize(into: &bytes, parentNamespace: XMPPNamespace.client)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix("<message to='o&apos;brien@x&amp;y' type='normal'><body>b</body><stamp xmlns='urn:xmppload:stamp:0' r="))
    }

    @Test(arguments: 0...5)
    func stampParsesBack(variant: Int) throws {
        let stamp = Self.stamp(variant)
        let message = StampedMessage(to: "user2@load.test", type: "chat", body: "x", stamp: stamp)
        var bytes: [UInt8] = []
        message.serialize(into: &bytes, parentNamespace: XMPPNamespace.client)
        let parsed = try StanzaParser().parseElement(bytes, in: StreamHeader())
        var expected = stamp
        if expected.generator == 0 { expected.generator = nil }
        #expect(MessageStamp(in: parsed) == expected)
    }

    @Test(arguments: [
        (Int64(0), "0"), (Int64(9), "9"), (Int64(10), "10"), (Int64(-1), "-1"), (Int64.max, String(Int64.max)),
        (Int64.min, String(Int64.min)),
    ])
    func decimals(value: Int64, expected: String) {
        var bytes: [UInt8] = []
        XMLEscaping.appendDecimal(value, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == expected)
        bytes.removeAll()
        XMLEscaping.appendDecimal(UInt64.max, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == String(UInt64.max))
    }
}
