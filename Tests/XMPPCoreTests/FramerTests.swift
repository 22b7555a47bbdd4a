import Testing

@testable import XMPPCore

private let header = "<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' version='1.0'>"

/// Frames `input` delivered in one piece and returns the units as strings (`open`, element text,
/// `close`), or throws the framer's error.
private func frame(_ input: String, maxElementBytes: Int = 1 << 20) throws(XMPPStreamError) -> [String] {
    var framer = XMLStreamFramer(maxElementBytes: maxElementBytes)
    framer.append(Array(input.utf8))
    var units: [String] = []
    while let unit = try framer.next() {
        switch unit {
        case .streamOpen: units.append("open")
        case .element(let bytes): units.append(String(decoding: bytes, as: UTF8.self))
        case .streamClose: units.append("close")
        }
    }
    return units
}

/// The error kind `frame` throws for `input`, or nil if it does not throw.
private func errorKind(_ input: String, maxElementBytes: Int = 1 << 20) -> String? {
    do {
        _ = try frame(input, maxElementBytes: maxElementBytes)
        return nil
    } catch {
        return error.kind
    }
}

@Suite struct FramerTests {
    @Test(
        arguments: [
            ("<a x='>'/>", "a '>' in a single-quoted value"),
            ("<a x=\">\"/>", "a '>' in a double-quoted value"),
            ("<a x='/>'></a>", "'/>' in a single-quoted value"),
            ("<a x=\"/>\" y='\"'>t</a>", "'/>' and a quote in values"),
            ("<a/>", "self-closing"),
            ("<a  />", "self-closing with space"),
            ("<a><a><a/></a><a>x</a></a>", "nested elements of the same name"),
            ("<a><![CDATA[</a><b>]]]]></a>", "CDATA with an end tag and brackets"),
            ("<a><![CDATA[]]></a>", "empty CDATA"),
            ("<a>x &amp; y &lt;/a&gt;</a>", "escaped markup in text"),
            ("<p:a xmlns:p='urn:p'><p:b/></p:a>", "prefixed names"),
            ("<é>ü</é>", "non-ASCII names"),
        ] as [(String, String)])
    func oneElementIsFramedWhole(element: String, what: String) throws {
        #expect(try frame(header + element) == ["open", element], "\(what)")
    }

    @Test func whitespaceBetweenElementsIsSkipped() throws {
        #expect(try frame(header + " \n\t\r <a/>  \n <b>x</b>\n\n  ") == ["open", "<a/>", "<b>x</b>"])
    }

    @Test func xmlDeclarationIsSkippedAndHeaderReturnedWhole() throws {
        var framer = XMLStreamFramer()
        framer.append(Array(("<?xml version='1.0' encoding='UTF-8'?>\n" + header).utf8))
        #expect(try framer.next() == .streamOpen(Array(header.utf8)))
        #expect(try framer.next() == nil)
        #expect(framer.bufferedByteCount == 0)
    }

    @Test func streamCloseAndTrailingWhitespace() throws {
        #expect(try frame(header + "<a/></stream:stream>\n ") == ["open", "<a/>", "close"])
        #expect(try frame(header + "</stream:stream >") == ["open", "close"])
    }

    @Test func unprefixedStreamElementClosesWithItsOwnName() throws {
        let plain = "<stream xmlns='http://etherx.jabber.org/streams'><a/></stream>"
        #expect(try frame(plain) == ["open", "<a/>", "close"])
        let wrongClose = "<stream xmlns='http://etherx.jabber.org/streams'><a/></stream:stream>"
        #expect(errorKind(wrongClose) == "xml-unbalanced")
    }

    @Test func returnsNilUntilAnElementIsComplete() throws {
        var framer = XMLStreamFramer()
        framer.append(Array(header.utf8))
        #expect(try framer.next() != nil)
        let element = Array("<message><body>hi</body></message>".utf8)
        for byte in element.dropLast() {
            framer.append([byte])
            #expect(try framer.next() == nil)
        }
        framer.append([element.last!])
        #expect(try framer.next() == .element(element))
        #expect(try framer.next() == nil)
    }

    @Test func manyElementsInOneReadComeOutOneByOne() throws {
        let elements = (0..<50).map { "<message id='\($0)'><body>\($0)</body></message>" }
        #expect(try frame(header + elements.joined(separator: " ")) == ["open"] + elements)
    }

    @Test(
        arguments: [
            // Restricted XML (RFC 6120 §11.1).
            (header + "<!-- comment --><a/>", "xml-restricted"),
            (header + "<a><!-- comment --></a>", "xml-restricted"),
            ("<!-- before -->" + header, "xml-restricted"),
            ("<?php echo ?>" + header, "xml-restricted"),
            ("<?xml-stylesheet href='x'?>" + header, "xml-restricted"),
            ("<?xml version='1.0'?><?xml version='1.0'?>" + header, "xml-restricted"),
            (header + "<?xml version='1.0'?>", "xml-restricted"),
            (header + "<a><?target data?></a>", "xml-restricted"),
            ("<!DOCTYPE stream [<!ENTITY x 'y'>]>" + header, "xml-restricted"),
            (header + "<a><!DOCTYPE a></a>", "xml-restricted"),
            (header + "<a><!ENTITY x 'y'></a>", "xml-restricted"),
            // Depth and text at stream level.
            (header + "</message>", "xml-unbalanced"),
            (header + "<a/></other:stream>", "xml-unbalanced"),
            (header + "hello<a/>", "xml-unexpected-text"),
            (header + "<a/>&amp;", "xml-unexpected-text"),
            (header + "<![CDATA[x]]>", "xml-unexpected-text"),
            // Header.
            ("hello" + header, "stream-header-invalid"),
            ("</stream:stream>", "stream-header-invalid"),
            ("<stream:stream xmlns:stream='http://etherx.jabber.org/streams'/>", "stream-header-invalid"),
            ("<![CDATA[x]]>" + header, "stream-header-invalid"),
            // After the close.
            (header + "</stream:stream><a/>", "stream-closed"),
            (header + "</stream:stream>x", "stream-closed"),
            // Syntax the framer itself can see.
            (header + "< a/>", "xml-malformed"),
            (header + "<1a/>", "xml-malformed"),
            (header + "<a b='<'/>", "xml-malformed"),
            (header + "<a <b/>", "xml-malformed"),
            (header + "<a></a <b>", "xml-malformed"),
        ] as [(String, String)])
    func malformedInputThrowsTypedError(input: String, kind: String) {
        #expect(errorKind(input) == kind, "\(input)")
    }

    @Test func malformedInputFailsTheSameWayWhateverTheChunking() {
        let input = Array((header + "<a x='1'/><!-- c -->").utf8)
        var framer = XMLStreamFramer()
        var thrown: XMPPStreamError?
        outer: for byte in input {
            framer.append([byte])
            do {
                while try framer.next() != nil {}
            } catch {
                thrown = error
                break outer
            }
        }
        #expect(thrown?.kind == "xml-restricted")
    }

    @Test func failureIsSticky() {
        var framer = XMLStreamFramer()
        framer.append(Array((header + "oops").utf8))
        #expect(throws: XMPPStreamError.self) { while try framer.next() != nil {} }
        framer.append(Array("<a/>".utf8))
        #expect { _ = try framer.next() } throws: { ($0 as? XMPPStreamError)?.kind == "xml-unexpected-text" }
        #expect(framer.bufferedByteCount == 0)
    }

    @Test func elementsUpToTheLimitPassAndLargerOnesFail() throws {
        let element = "<a>" + String(repeating: "x", count: 93) + "</a>"
        #expect(element.utf8.count == 100)
        #expect(try frame(header + element, maxElementBytes: 100) == ["open", element])
        #expect(errorKind(header + element, maxElementBytes: 99) == "xml-limit-element-size")
        // The header is bounded by the same limit.
        #expect(errorKind(header, maxElementBytes: 50) == "xml-limit-element-size")
    }

    @Test func incompleteElementBeyondTheLimitFailsBeforeItEnds() throws {
        var framer = XMLStreamFramer(maxElementBytes: 1000)
        framer.append(Array(header.utf8))
        _ = try framer.next()
        framer.append(Array("<message><body>".utf8))
        #expect(try framer.next() == nil)
        var thrown: XMPPStreamError?
        for _ in 0..<100 {
            framer.append(Array(repeating: UInt8(ascii: "x"), count: 100))
            do {
                _ = try framer.next()
            } catch {
                thrown = error
                break
            }
        }
        #expect(thrown?.kind == "xml-limit-element-size")
        #expect(framer.bufferedByteCount == 0)
    }

    @Test func restartExpectsANewHeader() throws {
        var framer = XMLStreamFramer()
        framer.append(Array((header + "<proceed xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>").utf8))
        #expect(try framer.next() != nil)
        #expect(try framer.next() != nil)
        #expect(framer.restart() == 0)
        // A second header is not an element: after the restart it opens the new stream.
        framer.append(Array(("<?xml version='1.0'?>" + header + "<a/>").utf8))
        #expect(try framer.next() == .streamOpen(Array(header.utf8)))
        #expect(try framer.next() == .element(Array("<a/>".utf8)))
    }

    @Test func withoutRestartASecondHeaderIsAnUnclosedElement() throws {
        var framer = XMLStreamFramer()
        framer.append(Array((header + header + "<a/>").utf8))
        #expect(try framer.next() != nil)
        // The second <stream:stream> opens depth 1 and never closes: no unit comes out.
        #expect(try framer.next() == nil)
    }

    @Test func restartDiscardsBytesThatArrivedBeforeTheNewStream() throws {
        var framer = XMLStreamFramer()
        let injected = "<message><body>plaintext injected after proceed</body></message>"
        framer.append(Array((header + "<proceed xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>" + injected).utf8))
        _ = try framer.next()
        _ = try framer.next()
        #expect(framer.restart() == injected.utf8.count)
        #expect(framer.bufferedByteCount == 0)
        #expect(framer.bufferCapacity == 0)
    }

    @Test func restartAfterAFailureStartsClean() throws {
        var framer = XMLStreamFramer()
        framer.append(Array("junk".utf8))
        #expect(throws: XMPPStreamError.self) { _ = try framer.next() }
        framer.restart()
        framer.append(Array((header + "<a/>").utf8))
        #expect(try framer.next() != nil)
        #expect(try framer.next() == .element(Array("<a/>".utf8)))
    }

    @Test func idleFramerHoldsNoStorage() throws {
        var framer = XMLStreamFramer()
        #expect(framer.bufferCapacity == 0)
        framer.append(Array((header + "<a>").utf8))
        _ = try framer.next()
        #expect(framer.bufferedByteCount == 3)
        framer.append(Array("</a>  ".utf8))
        #expect(try framer.next() == .element(Array("<a></a>".utf8)))
        #expect(try framer.next() == nil)
        #expect(framer.bufferedByteCount == 0)
        #expect(framer.bufferCapacity == 0)
        // Keepalive whitespace alone leaves nothing behind either.
        framer.append(Array(" ".utf8))
        #expect(try framer.next() == nil)
        #expect(framer.bufferCapacity == 0)
    }

    @Test func framerIsAFewWords() {
        // Scan state only; the bytes live in the (released-when-empty) array.
        #expect(MemoryLayout<XMLStreamFramer>.size <= 96)
    }

    @Test func dripFedLargeElementIsLinear() throws {
        // 200 KB fed one byte at a time: a rescanning framer would do ~2·10^10 steps and time out.
        var framer = XMLStreamFramer()
        framer.append(Array(header.utf8))
        _ = try framer.next()
        let element = Array(("<message><body>" + String(repeating: "<b x='>'>y</b>", count: 14_000) + "</body></message>").utf8)
        var units = 0
        for byte in element {
            framer.append(CollectionOfOne(byte).map { $0 })
            while try framer.next() != nil { units += 1 }
        }
        #expect(units == 1)
        #expect(framer.bufferCapacity == 0)
    }
}
