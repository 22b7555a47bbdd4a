import Testing

@testable import XMPPCore

/// A recorded server-to-client stream (Prosody-like) with everything a framer must get right, split
/// where the connection restarts: after `<proceed/>` (TLS starts) and after SASL `<success/>` (the
/// server only answers the client's new header). Bytes of different segments never share a read.
enum FramerTranscript {
    static let plaintext = """
        <?xml version='1.0'?><stream:stream xmlns='jabber:client' xml:lang='en' \
        xmlns:stream='http://etherx.jabber.org/streams' id='b5c2f0a1-1' from='load.test' version='1.0'>\
        <stream:features><starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'><required/></starttls>\
        </stream:features>
        <proceed xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>
        """

    static let afterTLS = """
        <?xml version='1.0'?><stream:stream xmlns='jabber:client' xml:lang='en' \
        xmlns:stream='http://etherx.jabber.org/streams' id='b5c2f0a1-2' from='load.test' version='1.0'>\
        <stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>\
        <mechanism>SCRAM-SHA-1</mechanism><mechanism>PLAIN</mechanism></mechanisms></stream:features>\
        <challenge xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>\
        cj1meWtvK2QybGJiRmdPTlJ2OXFreGRhd0wzcmZjTkhZSlkxWlZ2V1ZzN2oscz1RU1hDUitRNnNlazhiZjkyLGk9NDA5Ng==\
        </challenge>
        <iq type='set' id='profile-push'><query xmlns='urn:example:profile'><name>Load &amp; Test</name></query></iq>
        <success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>dj1ybUY5cHFWOFM3c3VBb1pXamE0ZEpSa0ZzS1E9</success>
        """

    static let afterSASL = """
        <?xml version='1.0'?>
        <stream:stream xmlns="jabber:client" xmlns:stream="http://etherx.jabber.org/streams" \
        id="b5c2f0a1-3" from="load.test" version="1.0" xml:lang="en">
        <stream:features><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/>\
        <session xmlns='urn:ietf:params:xml:ns:xmpp-session'><optional/></session>\
        <c xmlns='http://jabber.org/protocol/caps' hash='sha-1' node='http://prosody.im' ver='K6W2Bc5z4PXhb2FqGxp6mPtbX7U='/>\
        </stream:features>
        <iq type='result' id='bind_1'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'>\
        <jid>user1@load.test/xmppload-1</jid></bind></iq>
        <iq type='result' id='roster_1' to='user1@load.test/xmppload-1'>\
        <query xmlns='jabber:iq:roster' ver='3'>\
        <item jid='user2@load.test' subscription='both' name='User &quot;Two&quot; &amp; co'><group>Load</group></item>\
        <item jid='user3@load.test' subscription='both' name="it's > 2"/></query></iq>\u{20}\u{20}
        \t
        <presence from='user2@load.test/r' to='user1@load.test/xmppload-1'><priority>0</priority>\
        <delay xmlns='urn:xmpp:delay' stamp='2026-11-22T10:00:00Z' from='load.test'/></presence>
        <message type='chat' from='user2@load.test/r' to='user1@load.test/xmppload-1' id='m1'>\
        <body>tricky &lt;success/&gt; &amp; &lt;/stream:stream&gt; with 'single' and "double"</body>\
        <stamp xmlns='urn:xmppload:stamp:0' run='r1' sender='7' seq='1' sent='1234567'/></message>
        <message type='chat' id='m2'><body><![CDATA[cdata <b>bold</b> ]] ] > </message> ]]]></body></message>
        <message id='m3' type='chat'><x xmlns='urn:example:attr' a='a>b' b="c/>d" c='&lt;/x>' d="'"/></message>
        <iq type='get' id='ping1' from='load.test'><ping xmlns='urn:xmpp:ping'/></iq>
        <message id='m4'><body>héllo 👋 — 中文 &#x1F600;</body></message>
        <message id='m5'><x xmlns='jabber:x:data'><x><x>deep</x></x><x/></x></message>
        <stream:error><conflict xmlns='urn:ietf:params:xml:ns:xmpp-streams'/>\
        <text xmlns='urn:ietf:params:xml:ns:xmpp-streams' xml:lang='en'>Replaced by new connection</text>\
        </stream:error></stream:stream>
        """

    static var segments: [[UInt8]] {
        [Array(plaintext.utf8), Array(afterTLS.utf8), Array(afterSASL.utf8)]
    }

    /// (unit kind, local name, namespace) for every unit in the transcript, in order.
    static let expectedOutline: [String] = [
        "open",
        "element features http://etherx.jabber.org/streams",
        "element proceed urn:ietf:params:xml:ns:xmpp-tls",
        "open",
        "element features http://etherx.jabber.org/streams",
        "element challenge urn:ietf:params:xml:ns:xmpp-sasl",
        "element iq jabber:client",
        "element success urn:ietf:params:xml:ns:xmpp-sasl",
        "open",
        "element features http://etherx.jabber.org/streams",
        "element iq jabber:client",
        "element iq jabber:client",
        "element presence jabber:client",
        "element message jabber:client",
        "element message jabber:client",
        "element message jabber:client",
        "element iq jabber:client",
        "element message jabber:client",
        "element message jabber:client",
        "element error http://etherx.jabber.org/streams",
        "close",
    ]
}

/// What a session sees: the parsed units of a stream.
enum StreamEvent: Equatable, CustomStringConvertible {
    case open(StreamHeader)
    case element(XMLElement)
    case close

    var outline: String {
        switch self {
        case .open: "open"
        case .element(let element): "element \(element.name) \(element.namespace)"
        case .close: "close"
        }
    }

    var description: String {
        switch self {
        case .open(let header): "open \(header)"
        case .element(let element): element.serialized()
        case .close: "close"
        }
    }
}

/// Feeds segments to a framer in the given chunk sizes and parses every unit, restarting after
/// `<proceed/>` and `<success/>` as a session would.
struct FramerDriver {
    var framer = XMLStreamFramer()
    let parser = StanzaParser()
    var header: StreamHeader?
    var events: [StreamEvent] = []
    /// Largest number of bytes buffered after any `next()` returned nil.
    var peakBuffered = 0

    mutating func feed(_ chunk: ArraySlice<UInt8>) throws {
        chunk.withUnsafeBytes { framer.append($0) }
        while let unit = try framer.next() {
            switch unit {
            case .streamOpen(let bytes):
                let parsed = try parser.parseHeader(bytes)
                header = parsed
                events.append(.open(parsed))
            case .element(let bytes):
                let element = try parser.parseElement(bytes, in: header!)
                events.append(.element(element))
                let restarts =
                    (element.name == "proceed" && element.namespace == XMPPNamespace.tls)
                    || (element.name == "success" && element.namespace == XMPPNamespace.sasl)
                if restarts {
                    let discarded = framer.restart()
                    #expect(discarded == 0, "a chunk crossed a restart point")
                }
            case .streamClose:
                events.append(.close)
            }
        }
        peakBuffered = max(peakBuffered, framer.bufferedByteCount)
    }

    /// Runs every segment, cut into chunks of the sizes `chunkSizes(segmentLength)` returns.
    static func run(_ segments: [[UInt8]], chunkSizes: (Int) -> [Int]) throws -> FramerDriver {
        var driver = FramerDriver()
        for segment in segments {
            var offset = 0
            for size in chunkSizes(segment.count) {
                let end = min(segment.count, offset + size)
                try driver.feed(segment[offset..<end])
                offset = end
            }
            #expect(offset == segment.count, "chunk sizes must cover the segment")
        }
        return driver
    }
}

/// SplitMix64: a small, seedable generator so every random chunking is reproducible from its seed.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
