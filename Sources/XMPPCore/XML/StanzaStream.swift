import CLibXML2

/// One libxml2 push parser inside an endless synthetic wrapper element, `<w xmlns:p='…' …>`, that
/// declares a stream header's prefixed namespaces: `StanzaParser` feeds each stanza to it as one
/// chunk and the stanza comes out of the `SAXElementBuilder` whole, within that call.
///
/// Why a running push parser rather than a document per stanza: `xmlCtxtReadMemory` resets the
/// context and builds an input buffer, an input stream and a document prolog for every stanza
/// (~1.5 µs and ~8 allocations each on this machine, more when the caches are cold in a busy event
/// loop), where a chunk fed to a running parser costs ~0.3 µs and none; the wrapper's declarations
/// are parsed once per stream instead of once per stanza that uses their prefix.
///
/// After an error (malformed XML, a restricted construct, anything but exactly one element) the
/// parser's state is not trusted any more, since libxml2 halts a push parser on a fatal error: the
/// owner discards the stream (`parse` says so by throwing). It is also retired once `isWorn`, so
/// neither its name dictionary nor libxml2's running counters (line, bytes consumed) grow without
/// bound over a soak. Loop-bound, like its owner.
final class StanzaStream {
    /// The prefixed declarations the wrapper makes (neither the default namespace nor `xml`).
    let prefixed: [XMLNamespaceDeclaration]
    let context: UnsafeMutablePointer<xmlParserCtxt>
    /// Stanzas fed so far.
    private(set) var stanzas = 0

    /// Stanzas a stream parses before it is retired.
    static let maximumStanzas = 1_000_000

    /// A push parser with `StanzaParser`'s options and configuration (SAX into `builder`), with the
    /// wrapper already open; nil when libxml2 cannot make one or refuses the wrapper.
    init?(prefixed: [XMLNamespaceDeclaration], builder: SAXElementBuilder) {
        guard let context = xmlCreatePushParserCtxt(nil, nil, nil, 0, nil) else { return nil }
        self.prefixed = prefixed
        self.context = context
        xmlCtxtUseOptions(context, StanzaParser.options)
        StanzaParser.configure(context, builder: builder)
        var opening = Array("<w".utf8)
        for declaration in prefixed {
            XMLEscaping.appendAttribute("xmlns:" + declaration.prefix, declaration.uri, to: &opening)
        }
        // libxml2's push parser starts only once it has 4 bytes (to sniff the encoding): `<w>` alone
        // would leave the wrapper unopened.
        if prefixed.isEmpty { opening.append(UInt8(ascii: " ")) }
        opening.append(UInt8(ascii: ">"))
        builder.use(dictionary: context.pointee.dict)
        builder.reset()
        opening.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { _ = xmlParseChunk(context, $0.baseAddress, Int32($0.count), 0) }
        }
        guard context.pointee.wellFormed != 0, context.pointee.nsWellFormed != 0, builder.depth == 1 else {
            return nil  // deinit frees the context
        }
    }

    deinit {
        xmlFreeParserCtxt(context)
    }

    /// Whether the stream should be replaced before its next stanza.
    var isWorn: Bool {
        stanzas >= Self.maximumStanzas || xmlDictSize(context.pointee.dict) > StanzaParser.maximumDictionaryEntries
    }

    /// Parses one complete depth-1 element into `builder` (whose `implicitDefault` the caller set).
    ///
    /// - Throws: as `StanzaParser.parseElement`; the stream is then unusable.
    func parse(_ bytes: UnsafeRawBufferPointer, into builder: SAXElementBuilder) throws(XMPPStreamError) -> XMLElement {
        guard let base = bytes.baseAddress, !bytes.isEmpty, bytes.count < Int(Int32.max) else {
            throw .malformed("expected exactly one element")
        }
        builder.use(dictionary: context.pointee.dict)
        builder.reset(depth: 1)
        stanzas += 1
        // The return value is libxml2's last error number, which sticks after a mere warning (a
        // relative namespace URI): judged by the context's flags and the builder instead.
        _ = xmlParseChunk(context, base.assumingMemoryBound(to: CChar.self), Int32(bytes.count), 0)
        try StanzaParser.checkParse(of: context, into: builder)
        // Everything must have been parsed: libxml2 holds back what could still grow (text after
        // the element waits for a `<`), which would otherwise open the next stanza's chunk.
        guard let input = context.pointee.input, input.pointee.cur == input.pointee.end,
            let element = builder.result, !builder.extraContent, builder.depth == 1
        else {
            throw .malformed("expected exactly one element")
        }
        return element
    }
}
