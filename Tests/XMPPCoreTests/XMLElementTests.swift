import Testing

@testable import XMPPCore

@Suite struct XMLElementTests {
    private let header = StreamHeader()

    private func roundTrip(_ element: XMLElement) throws -> XMLElement {
        var bytes: [UInt8] = []
        element.serialize(into: &bytes, parentNamespace: header.defaultNamespace)
        return try StanzaParser().parseElement(bytes, in: header)
    }

    @Test func writesNamespacesOnlyWhereTheyChange() {
        let iq = XMLElement(
            "iq", namespace: XMPPNamespace.client, attributes: ["type": "get", "id": "r1"],
            children: [
                .element(
                    XMLElement(
                        "query", namespace: XMPPNamespace.roster,
                        children: [
                            .element(XMLElement("item", namespace: XMPPNamespace.roster, attributes: ["jid": "a@b"]))
                        ]))
            ])
        #expect(iq.serialized() == "<iq type='get' id='r1'><query xmlns='jabber:iq:roster'><item jid='a@b'/></query></iq>")
        #expect(
            iq.serialized(parentNamespace: "")
                == "<iq xmlns='jabber:client' type='get' id='r1'><query xmlns='jabber:iq:roster'><item jid='a@b'/></query></iq>")
    }

    @Test func elementInNoNamespaceUndeclaresTheDefault() {
        let message = XMLElement("message", namespace: XMPPNamespace.client, children: [.element(XMLElement("x"))])
        #expect(message.serialized() == "<message><x xmlns=''/></message>")
    }

    @Test func escapesTextAndAttributeValues() {
        let element = XMLElement(
            "body", namespace: XMPPNamespace.client, attributes: ["a": "<'\"&>"],
            children: [
                .text("<success/> & 'q' \"d\" ]]>")
            ])
        #expect(element.serialized() == "<body a='&lt;&apos;&quot;&amp;&gt;'>&lt;success/&gt; &amp; 'q' \"d\" ]]&gt;</body>")
    }

    @Test func escapesWhitespaceThatParsersWouldNormalize() {
        let element = XMLElement("b", namespace: XMPPNamespace.client, attributes: ["v": "a\tb\nc\rd"], children: [.text("x\r\ny")])
        #expect(element.serialized() == "<b v='a&#9;b&#10;c&#13;d'>x&#13;\ny</b>")
    }

    @Test func replacesCharactersXMLCannotCarry() throws {
        let element = XMLElement("b", namespace: XMPPNamespace.client, children: [.text("a\u{0}b\u{1B}c\u{FFFE}d\u{FFFF}")])
        #expect(element.serialized() == "<b>a\u{FFFD}b\u{FFFD}c\u{FFFD}d\u{FFFD}</b>")
        #expect(try roundTrip(element).text == "a\u{FFFD}b\u{FFFD}c\u{FFFD}d\u{FFFD}")
    }

    @Test(arguments: [
        "plain",
        "quotes ' and \" both",
        "<success/> & </stream:stream>",
        "&amp; already escaped &lt;",
        "]]> cdata end",
        "line\nbreaks\r\nand\ttabs\r",
        "  leading and trailing spaces  ",
        "héllo wörld — ñ",
        "中文 日本語 한국어",
        "emoji 👋🏽 👨‍👩‍👧 😀",
        "mixed <a href='x'>\"&\"</a> 👍",
    ])
    func escapingRoundTrips(value: String) throws {
        let element = XMLElement(
            "message", namespace: XMPPNamespace.client, attributes: ["id": value, "to": "u@d"],
            children: [
                .element(XMLElement("body", namespace: XMPPNamespace.client, children: [.text(value)])),
                .element(
                    XMLElement(
                        "data", namespace: "urn:example:\(value.utf8.count)", attributes: ["v": value],
                        children: [
                            .text(value), .element(XMLElement("inner", namespace: "urn:example:\(value.utf8.count)")), .text(value),
                        ])),
            ])
        #expect(try roundTrip(element) == element)
    }

    @Test func xmlLangRoundTrips() throws {
        let element = XMLElement(
            "message", namespace: XMPPNamespace.client, attributes: ["xml:lang": "de"],
            children: [
                .element(XMLElement("body", namespace: XMPPNamespace.client, children: [.text("Hallo")]))
            ])
        #expect(try roundTrip(element) == element)
    }

    @Test func accessors() {
        var message = XMLElement(
            "message", namespace: XMPPNamespace.client, attributes: ["type": "chat"],
            children: [
                .text("a"),
                .element(XMLElement("body", namespace: XMPPNamespace.client, children: [.text("hi")])),
                .text("b"),
                .element(XMLElement("stamp", namespace: XMPPNamespace.stamp)),
                .element(XMLElement("body", namespace: "urn:other")),
            ])
        #expect(message.attribute("type") == "chat")
        #expect(message.attribute("to") == nil)
        #expect(message.text == "ab")
        #expect(message.firstChild(named: "body")?.text == "hi")
        #expect(message.firstChild(named: "body", namespace: "urn:other")?.namespace == "urn:other")
        #expect(message.firstChild(named: "stamp", namespace: XMPPNamespace.client) == nil)
        #expect(message.children(named: "body").count == 2)
        #expect(message.children(named: "body", namespace: XMPPNamespace.client).count == 1)
        #expect(message.elementChildren.map(\.name) == ["body", "stamp", "body"])

        message.setAttribute("to", to: "u@d")
        message.setAttribute("type", to: "normal")
        #expect(message.attributes == [XMLAttribute("type", "normal"), XMLAttribute("to", "u@d")])
        message.setAttribute("type", to: nil)
        #expect(message.attributes == [XMLAttribute("to", "u@d")])
        message.append(text: "c")
        message.append(XMLElement("thread", namespace: XMPPNamespace.client))
        #expect(message.text == "abc")
        #expect(message.elementChildren.last?.name == "thread")
    }

    @Test func streamHeaderSerializesAndParsesBack() throws {
        let header = StreamHeader(from: "user1@load.test", to: "load.test", id: nil, version: "1.0", language: "en")
        var bytes: [UInt8] = []
        header.serialize(into: &bytes)
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == "<?xml version='1.0'?><stream:stream from='user1@load.test' to='load.test' version='1.0' xml:lang='en' xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'>"
        )
        var framer = XMLStreamFramer()
        framer.append(bytes)
        guard case .streamOpen(let opening) = try framer.next() else {
            Issue.record("no stream header framed")
            return
        }
        #expect(try StanzaParser().parseHeader(opening) == header)
        #expect(String(decoding: header.closingTag, as: UTF8.self) == "</stream:stream>")
    }

    @Test func streamHeaderEscapesAttributeValues() {
        let header = StreamHeader(to: "a'b<c>&\"")
        var bytes: [UInt8] = []
        header.serialize(into: &bytes, withDeclaration: false)
        #expect(String(decoding: bytes, as: UTF8.self).hasPrefix("<stream:stream to='a&apos;b&lt;c&gt;&amp;&quot;' "))
    }
}
