import Testing

@testable import XMPPCore

private let clientHeader = StreamHeader()

/// The kind of error `body` throws, or nil.
private func errorKind(_ body: () throws -> Void) -> String? {
    do {
        try body()
        return nil
    } catch let error as XMPPStreamError {
        return error.kind
    } catch {
        return "unexpected error type: \(error)"
    }
}

@Suite struct StanzaParserTests {
    let parser = StanzaParser()

    private func parse(_ xml: String, in header: StreamHeader = clientHeader) throws(XMPPStreamError) -> XMLElement {
        try parser.parseElement(Array(xml.utf8), in: header)
    }

    @Test func parsesAServerHeader() throws {
        let header = try parser.parseHeader(
            Array(
                """
                <?xml version='1.0'?><stream:stream xmlns='jabber:client' xml:lang='en' \
                xmlns:stream='http://etherx.jabber.org/streams' id='abc&amp;1' from='load.test' to='u@load.test' version='1.0'>
                """.utf8))
        #expect(header.qualifiedName == "stream:stream")
        #expect(header.id == "abc&1")
        #expect(header.from == "load.test")
        #expect(header.to == "u@load.test")
        #expect(header.version == "1.0")
        #expect(header.language == "en")
        #expect(header.defaultNamespace == XMPPNamespace.client)
        #expect(header.namespace(forPrefix: "stream") == XMPPNamespace.streams)
        #expect(
            header.namespaces == [
                XMLNamespaceDeclaration(prefix: "", uri: XMPPNamespace.client),
                XMLNamespaceDeclaration(prefix: "stream", uri: XMPPNamespace.streams),
            ])
    }

    @Test func clientHeadersShareOneNamespaceArrayAndElementsParseInItsScope() throws {
        let first = try parser.parseHeader(
            Array("<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' id='a'>".utf8))
        let second = try StanzaParser().parseHeader(
            Array("<stream:stream xmlns:stream='http://etherx.jabber.org/streams' xmlns='jabber:client' id='b'>".utf8))
        let other = try parser.parseHeader(Array("<s:stream xmlns:s='http://etherx.jabber.org/streams' xmlns='jabber:client'>".utf8))
        // Order matters to the comparison: the second declares them the other way round, so it keeps its own.
        #expect(
            first.namespaces.withUnsafeBufferPointer { $0.baseAddress }
                == StanzaParser.clientStreamNamespaces.withUnsafeBufferPointer { $0.baseAddress })
        #expect(second.namespaces.count == 2 && second.namespaces != first.namespaces)
        #expect(other.namespaces != first.namespaces)
        let message = try parser.parseElement(Array("<message to='x'><stream:error/></message>".utf8), inScopeOf: first.namespaces)
        #expect(message.namespace == XMPPNamespace.client)
        #expect(message.firstChild(named: "error")?.namespace == XMPPNamespace.streams, "the stream prefix is in scope")
        #expect(
            try parser.parseElement(Array("<message to='x'/>".utf8), in: first)
                == parser.parseElement(Array("<message to='x'/>".utf8), inScopeOf: first.namespaces))
    }

    @Test func headerWithOtherPrefixAndNoDefaultNamespace() throws {
        let header = try parser.parseHeader(Array("<s:stream xmlns:s='http://etherx.jabber.org/streams' version='1.0'>".utf8))
        #expect(header.qualifiedName == "s:stream")
        #expect(header.defaultNamespace == "")
        let features = try parser.parseElement(Array("<s:features><x xmlns='urn:x'/></s:features>".utf8), in: header)
        #expect(features.namespace == XMPPNamespace.streams)
        #expect(features.firstChild(named: "x")?.namespace == "urn:x")
    }

    @Test(
        arguments: [
            ("<stream:stream xmlns:stream='urn:wrong'>", "stream-header-invalid"),
            ("<stream:features xmlns:stream='http://etherx.jabber.org/streams'>", "stream-header-invalid"),
            ("<stream:stream>", "xml-malformed"),
            ("<stream:stream xmlns:stream='http://etherx.jabber.org/streams' id='1' id='2'>", "xml-malformed"),
            ("<stream:stream xmlns:stream='http://etherx.jabber.org/streams' id='&x;'>", "xml-malformed"),
            ("<!DOCTYPE stream [<!ENTITY x 'y'>]><stream:stream xmlns:stream='http://etherx.jabber.org/streams'>", "xml-restricted"),
            ("<!DOCTYPE stream SYSTEM 'http://127.0.0.1:9/x.dtd'><stream:stream xmlns:stream='http://etherx.jabber.org/streams'>", "xml-restricted"),
            ("", "stream-header-invalid"),
            ("<stream version='1.0'>", "stream-header-invalid"),
            ("<!-- hi --><stream:stream xmlns:stream='http://etherx.jabber.org/streams'>", "xml-restricted"),
            (" <?xml version='1.0'?><stream:stream xmlns:stream='http://etherx.jabber.org/streams'>", "xml-malformed"),
            ("<?xml version='1.0'?><?xml version='1.0'?><stream:stream xmlns:stream='http://etherx.jabber.org/streams'>", "xml-malformed"),
            ("<stream:stream xmlns:stream='http://etherx.jabber.org/streams' a='<'>", "xml-malformed"),
            ("<stream:stream xmlns:stream='http://etherx.jabber.org/streams' xmlns:x=''>", "xml-malformed"),
        ] as [(String, String)])
    func invalidHeaders(input: String, kind: String) {
        // A stanza first, so the default namespace it was parsed with is in the parser's state.
        #expect(throws: Never.self) { _ = try parse("<message/>") }
        #expect(errorKind { _ = try parser.parseHeader(Array(input.utf8)) } == kind, "\(input)")
    }

    /// Headers with no prolog or a plain XML declaration go through a running push parser, any other
    /// prolog through a document: both read the same header, and a bad header spoils neither the next
    /// header nor a stanza.
    @Test(arguments: [
        "", "\n ", "<?xml version='1.0'?>", "<?xml version=\"1.0\"?>", "<?xml version='1.0'?>\n",
        "<?xml version='1.0' encoding='UTF-8'?>", "<?xml version=\"1.0\" encoding=\"utf-8\"?>",
        "<?xml version='1.0' encoding='ISO-8859-1'?>", "<?xml version='1.0' standalone='yes'?>",
    ])
    func everyPrologReadsTheSameHeader(prolog: String) throws {
        let tag = "<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' xml:lang='en' id='i' version='1.0'>"
        let expected = try StanzaParser().parseHeader(Array(tag.utf8))
        let plain = !prolog.contains("ISO") && !prolog.contains("standalone")
        for round in 0..<3 {
            let documents = parser.documentHeaders
            #expect(try parser.parseHeader(Array((prolog + tag).utf8)) == expected, "round \(round)")
            #expect(parser.documentHeaders == documents + (plain ? 0 : 1), "round \(round)")
            #expect(errorKind { _ = try parser.parseHeader(Array("<stream:stream xmlns:stream='urn:x' a='1' a='2'>".utf8)) } == "xml-malformed")
            #expect(try parse("<message to='x'/>").attribute("to") == "x")
        }
    }

    @Test func manyHeadersInARowOnOneParser() throws {
        var previous: StreamHeader?
        for index in 0..<2_000 {
            let header = try parser.parseHeader(
                Array(
                    "<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' id='s\(index)'>".utf8))
            #expect(header.id == "s\(index)")
            #expect(header.namespaces == StanzaParser.clientStreamNamespaces)
            if let previous { #expect(previous.id != header.id) }
            previous = header
        }
    }

    @Test func headerAttributesAreTakenOnlyWithoutAPrefixAndXMLLangOnlyInTheXMLNamespace() throws {
        let header = try parser.parseHeader(
            Array(
                """
                <stream xmlns='http://etherx.jabber.org/streams' xmlns:o='urn:other' o:id='not-it' id='it' \
                o:lang='no' from='a&#x26;b'>
                """.utf8))
        #expect(header.qualifiedName == "stream")
        #expect(header.id == "it")
        #expect(header.from == "a&b")
        #expect(header.language == nil)
        #expect(header.namespaces.map(\.prefix) == ["", "o"])
    }

    @Test func streamLevelElementsResolveToTheStreamsNamespace() throws {
        let features = try parse(
            "<stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>PLAIN</mechanism></mechanisms></stream:features>")
        #expect(features.name == "features")
        #expect(features.namespace == XMPPNamespace.streams)
        let mechanisms = try #require(features.firstChild(named: "mechanisms"))
        #expect(mechanisms.namespace == XMPPNamespace.sasl)
        #expect(mechanisms.firstChild(named: "mechanism")?.namespace == XMPPNamespace.sasl)

        let error = try parse("<stream:error><host-unknown xmlns='urn:ietf:params:xml:ns:xmpp-streams'/></stream:error>")
        #expect(error.name == "error" && error.namespace == XMPPNamespace.streams)
        #expect(error.firstChild(named: "host-unknown", namespace: XMPPNamespace.streamErrors) != nil)
    }

    @Test func namespacesDefaultPrefixedAndRedeclared() throws {
        let iq = try parse(
            """
            <iq type='result'><query xmlns='jabber:iq:roster'><item jid='a@b'><group>G</group>\
            <x xmlns='jabber:client'><y/></x><z xmlns=''/></item></query>\
            <p:stamp xmlns:p='urn:p' p:seq='1' plain='2'><p:inner/><outer/></p:stamp></iq>
            """)
        #expect(iq.namespace == XMPPNamespace.client)
        let query = try #require(iq.firstChild(named: "query"))
        #expect(query.namespace == XMPPNamespace.roster)
        let item = try #require(query.firstChild(named: "item"))
        #expect(item.namespace == XMPPNamespace.roster)
        #expect(item.firstChild(named: "group")?.namespace == XMPPNamespace.roster)
        #expect(item.firstChild(named: "x")?.namespace == XMPPNamespace.client)
        #expect(item.firstChild(named: "x")?.firstChild(named: "y")?.namespace == XMPPNamespace.client)
        #expect(item.firstChild(named: "z")?.namespace == "")
        let stamp = try #require(iq.firstChild(named: "stamp"))
        #expect(stamp.namespace == "urn:p")
        #expect(stamp.attributes == [XMLAttribute("p:seq", "1"), XMLAttribute("plain", "2")])
        #expect(stamp.firstChild(named: "inner")?.namespace == "urn:p")
        #expect(stamp.firstChild(named: "outer")?.namespace == XMPPNamespace.client)
    }

    /// The stream's default namespace is given by the builder, not declared in the wrapper: an
    /// undeclared default (`xmlns=''`) holds for the whole subtree and ends with it.
    @Test func anUndeclaredDefaultNamespaceHoldsForItsSubtreeOnly() throws {
        let message = try parse("<message><x xmlns=''><y><z/></y></x><body>b</body><w xmlns='urn:w'><v xmlns=''/><u/></w></message>")
        #expect(message.namespace == XMPPNamespace.client)
        let x = try #require(message.firstChild(named: "x"))
        #expect(x.namespace == "")
        #expect(x.firstChild(named: "y")?.namespace == "")
        #expect(x.firstChild(named: "y")?.firstChild(named: "z")?.namespace == "")
        #expect(message.firstChild(named: "body")?.namespace == XMPPNamespace.client)
        let w = try #require(message.firstChild(named: "w"))
        #expect(w.firstChild(named: "v")?.namespace == "")
        #expect(w.firstChild(named: "u")?.namespace == "urn:w")
        // Parsed again, with the same parser and scope: nothing of the previous parse is left over.
        #expect(try parse("<presence/>").namespace == XMPPNamespace.client)
    }

    @Test func namespaceDeclarationsAreNotAttributes() throws {
        let message = try parse("<message xmlns='jabber:client' xmlns:a='urn:a' to='x@y' xml:lang='fr'/>")
        #expect(message.attributes == [XMLAttribute("to", "x@y"), XMLAttribute("xml:lang", "fr")])
    }

    @Test func textEntitiesCDATAAndCharacterReferences() throws {
        let body = try parse("<body>a &lt;b&gt; &amp; &quot;c&quot; &apos;d&apos; &#65;&#x42; <![CDATA[<raw> & ]]>end</body>")
        #expect(body.children == [.text("a <b> & \"c\" 'd' AB <raw> & end")])
        let attribute = try parse("<x v='&lt;&amp;&#65;&quot;&apos;&#x1F600;'/>")
        #expect(attribute.attribute("v") == "<&A\"'😀")
    }

    @Test func whitespaceTextIsKept() throws {
        let message = try parse("<message>\n  <body> x </body>\n</message>")
        #expect(message.children.count == 3)
        #expect(message.firstChild(named: "body")?.text == " x ")
    }

    @Test(
        arguments: [
            ("<message><body>x</message>", "xml-malformed"),
            ("<message>&foo;</message>", "xml-malformed"),
            ("<a b='1' b='2'/>", "xml-malformed"),
            ("<p:x/>", "xml-malformed"),
            ("<x p:a='1'/>", "xml-malformed"),
            ("<a/><b/>", "xml-malformed"),
            ("text<a/>", "xml-malformed"),
            ("", "xml-malformed"),
            ("<a>\u{1}</a>", "xml-malformed"),
            ("<a>&#0;</a>", "xml-malformed"),
            ("<a", "xml-malformed"),
            ("<message><!-- hidden --></message>", "xml-restricted"),
            ("<message><?target data?></message>", "xml-restricted"),
        ] as [(String, String)])
    func malformedElements(input: String, kind: String) {
        #expect(errorKind { _ = try parse(input) } == kind, "\(input)")
    }

    @Test func invalidUTF8IsMalformed() {
        let bytes: [UInt8] = Array("<body>".utf8) + [0xFF, 0xFE] + Array("</body>".utf8)
        #expect(errorKind { _ = try parser.parseElement(bytes, in: clientHeader) } == "xml-malformed")
    }

    @Test func errorsCarryLibxml2sMessage() throws {
        // Earlier parses, good and bad, must not leak into the message of a later one.
        _ = try parse("<a/>")
        #expect(errorKind { _ = try parse("<a>&x;</a>") } == "xml-malformed")
        do {
            _ = try parse("<message><body>x</message>")
            Issue.record("no error")
        } catch {
            #expect(error.description == "malformed XML: Opening and ending tag mismatch: body line 1 and message", "\(error.description)")
        }
    }

    @Test func excessiveDepthIsRefused() {
        let deep = String(repeating: "<a>", count: 300) + String(repeating: "</a>", count: 300)
        #expect(errorKind { _ = try parse(deep) } == "xml-malformed")
    }

    @Test func contextIsReusableAfterErrors() throws {
        for round in 0..<3 {
            #expect(errorKind { _ = try parse("<p:x/>") } == "xml-malformed")
            #expect(errorKind { _ = try parse("<a><b></a>") } == "xml-malformed")
            #expect(errorKind { _ = try parser.parseHeader(Array("<!DOCTYPE x><x>".utf8)) } == "xml-restricted")
            let message = try parse("<message id='\(round)'><body>ok</body></message>")
            #expect(message.attribute("id") == "\(round)")
        }
    }

    /// Stanzas run through one push parser (`StanzaStream`): whatever a chunk leaves behind (an open
    /// element, a closed wrapper, stray text, a comment) is malformed or restricted for that stanza
    /// alone, and the next one parses as if nothing had happened.
    @Test(
        arguments: [
            ("<a>", "xml-malformed"),
            ("<a><b>", "xml-malformed"),
            ("<a/></w>", "xml-malformed"),
            ("</w><a/>", "xml-malformed"),
            ("<a/><b/>", "xml-malformed"),
            ("just text", "xml-malformed"),
            ("<a/>tail", "xml-malformed"),
            ("<a/>  ", "xml-malformed"),
            ("<a/><", "xml-malformed"),
            ("<a/><!--", "xml-malformed"),
            ("<a/>&amp;", "xml-malformed"),
            ("<a><![CDATA[x</a>", "xml-malformed"),
            ("<a x='>", "xml-malformed"),
            ("<a><!-- c --></a>", "xml-restricted"),
            ("<a><?pi x?></a>", "xml-restricted"),
            ("<a x='1' x='2'/>", "xml-malformed"),
        ] as [(String, String)])
    func aBadChunkSpoilsOnlyItsOwnStanza(input: String, kind: String) throws {
        #expect(try parse("<presence id='before'/>").attribute("id") == "before")
        #expect(errorKind { _ = try parse(input) } == kind, "\(input)")
        let after = try parse("<message id='after'><body>a &amp; b</body><x xmlns='urn:x'/></message>")
        #expect(after.attribute("id") == "after")
        #expect(after.namespace == XMPPNamespace.client)
        #expect(after.firstChild(named: "body")?.text == "a & b")
        #expect(after.firstChild(named: "x")?.namespace == "urn:x")
    }

    @Test func manyStanzasInARowEachComeOutWhole() throws {
        for index in 0..<5_000 {
            let stanza = try parse("<message id='m\(index)'><body>\(index)</body><stream:error/></message>")
            #expect(stanza.attribute("id") == "m\(index)")
            #expect(stanza.firstChild(named: "error")?.namespace == XMPPNamespace.streams)
        }
    }

    @Test func parsesWithChangingHeadersAndManyDistinctNames() throws {
        let other = StreamHeader(defaultNamespace: "jabber:server")
        for index in 0..<25_000 {
            let header = index.isMultiple(of: 2) ? clientHeader : other
            let element = try parse("<n\(index) a\(index)='v'/>", in: header)
            #expect(element.name == "n\(index)")
            #expect(element.namespace == header.defaultNamespace)
            #expect(element.attribute("a\(index)") == "v")
        }
        // 50,000 distinct names exceed the dictionary bound: the context was replaced, parsing went on.
        #expect(parser.contextRenewals >= 1)
    }

    @Test func parsesFromARawBuffer() throws {
        let bytes = Array("<presence/>".utf8)
        let presence = try bytes.withUnsafeBytes { raw throws(XMPPStreamError) in
            try parser.parseElement(raw, in: clientHeader)
        }
        #expect(presence == XMLElement("presence", namespace: XMPPNamespace.client))
    }
}
