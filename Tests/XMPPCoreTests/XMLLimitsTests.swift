import Testing

@testable import XMPPCore

private let header = "<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' version='1.0'>"

/// Frames `input` in one piece with `limits`; returns the number of units or the error kind.
private func outcome(_ input: String, limits: XMLLimits = .default) -> String {
    var framer = XMLStreamFramer(limits: limits)
    framer.append(Array(input.utf8))
    var units = 0
    do {
        while try framer.next() != nil { units += 1 }
        return "\(units) units"
    } catch {
        return error.kind
    }
}

private func attributes(_ count: Int) -> String {
    (0..<count).map { " a\($0)='v'" }.joined()
}

/// What a hostile server's input costs a session is bounded by `XMLLimits`, with typed errors.
@Suite struct XMLLimitsTests {
    static let limits = XMLLimits(
        maxElementBytes: 4096, maxBufferedBytes: 8192, maxDepth: 8,
        maxAttributesPerElement: 10, maxHeaderNamespaces: 4)

    @Test(arguments: [
        // (input after the header, expected outcome)
        ("<a\(attributes(10))/>", "2 units"),
        ("<a\(attributes(11))/>", "xml-limit-attributes"),
        ("<a><b\(attributes(11))/></a>", "xml-limit-attributes"),
        (String(repeating: "<a>", count: 8) + String(repeating: "</a>", count: 8), "2 units"),
        (String(repeating: "<a>", count: 9), "xml-limit-depth"),
        ("<a>" + String(repeating: "x", count: 4096) + "</a>", "xml-limit-element-size"),
    ])
    func framerLimits(_ element: String, _ expected: String) {
        #expect(outcome(header + element, limits: Self.limits) == expected)
    }

    @Test func headerAttributesAreBounded() {
        let hostile = "<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'\(attributes(20))>"
        #expect(outcome(hostile, limits: Self.limits) == "xml-limit-attributes")
    }

    @Test func bufferedBytesAreBounded() throws {
        var framer = XMLStreamFramer(limits: Self.limits)
        framer.append(Array(header.utf8))
        #expect(try framer.next() != nil)
        // Complete elements the caller has not taken yet count too.
        framer.append(Array(repeating: UInt8(ascii: " "), count: 8000))
        framer.append(Array(repeating: UInt8(ascii: " "), count: 500))
        #expect { _ = try framer.next() } throws: { ($0 as? XMPPStreamError)?.kind == "xml-limit-buffer" }
        #expect(framer.bufferedByteCount == 0)
    }

    @Test func defaultsAreWellUnderOneMebibyteAndValid() {
        let limits = XMLLimits.default
        #expect(limits.maxElementBytes < 1 << 20)
        #expect(limits.maxBufferedBytes >= limits.maxElementBytes)
        #expect(limits.problems.isEmpty)
        #expect(XMLLimits(maxElementBytes: 10, maxDepth: 0).problems.count == 2)
        #expect(XMLStreamFramer().limits == limits)
    }

    @Test func headerNamespaceDeclarationsAreBounded() {
        let parser = StanzaParser(limits: Self.limits)
        let declarations = (0..<5).map { " xmlns:p\($0)='urn:p\($0)'" }.joined()
        let hostile = "<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'\(declarations)>"
        #expect { _ = try parser.parseHeader(Array(hostile.utf8)) } throws: {
            ($0 as? XMPPStreamError)?.kind == "xml-limit-namespaces"
        }
        let fine = "<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' xmlns:p0='urn:p0'>"
        #expect(throws: Never.self) { _ = try parser.parseHeader(Array(fine.utf8)) }
    }

    /// The wrapper carries only the declarations an element uses; prefixes still resolve, in any order.
    @Test func elementsResolveOnlyTheDeclarationsTheyUse() throws {
        let parser = StanzaParser()
        let header = try parser.parseHeader(
            Array(
                """
                <stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' xmlns:db='jabber:server:dialback'>
                """.utf8))
        let plain = try parser.parseElement(Array("<message to='a@b'><body>hi</body></message>".utf8), in: header)
        #expect(plain.namespace == XMPPNamespace.client)
        let features = try parser.parseElement(Array("<stream:features/>".utf8), in: header)
        #expect(features.namespace == XMPPNamespace.streams)
        let dialback = try parser.parseElement(Array("<db:result from='x'/>".utf8), in: header)
        #expect(dialback.namespace == "jabber:server:dialback")
        // Back to an element without prefixes: the wrapper must not keep stale declarations' effects.
        let again = try parser.parseElement(Array("<iq type='get' id='1'/>".utf8), in: header)
        #expect(again.namespace == XMPPNamespace.client)
        // An undeclared prefix is still an error.
        #expect { _ = try parser.parseElement(Array("<zz:x/>".utf8), in: header) } throws: {
            ($0 as? XMPPStreamError)?.kind == "xml-malformed"
        }
    }
}
