import CLibXML2

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Parses complete stream headers and depth-1 elements (as cut out by `XMLStreamFramer`) into
/// `StreamHeader` and `XMLElement` values with libxml2's SAX2 events, which build the values straight
/// away (`SAXElementBuilder`: no libxml2 tree to build, walk and free): a header as its own small
/// document on a reused context (the document's root, kept with its declarations), stanzas as chunks
/// fed to a running push parser (`StanzaStream`) whose endless wrapper element declares the stream
/// header's prefixed namespaces.
///
/// One per event loop (a context costs ~12.7 KB; sessions share them): not `Sendable`, use it from one
/// thread at a time. Each element is parsed with the stream header's namespace declarations in scope,
/// so `<stream:features>` resolves to `http://etherx.jabber.org/streams` and an unprefixed
/// `<message>` to `jabber:client`: the prefixed ones are the wrapper's, one `StanzaStream` per set of
/// them (the few most recently used are kept: one in practice); the default namespace is never
/// declared there but given by the builder (`SAXElementBuilder.implicitDefault`); and a header with
/// more than `XMLLimits.maxHeaderNamespaces` declarations is refused (`xml-limit-namespaces`).
///
/// Safety: no network access (`XML_PARSE_NONET`), no entity substitution beyond the predefined
/// entities and character references, DTDs refused (the parser stops at `<!DOCTYPE`), comments,
/// processing instructions and entity references refused as restricted XML (RFC 6120 §11.1),
/// libxml2's default depth and size limits kept. Malformed input throws `XMPPStreamError` carrying
/// libxml2's message; the stanza stream that saw it is discarded, so one session's bad stanza never
/// affects the next one parsed.
public final class StanzaParser {
    private static let libraryInitialized: Void = xmlInitParser()

    /// Options for every parse: see the type's documentation. Entities are substituted
    /// (`XML_PARSE_NOENT`), so SAX hands over attribute values with character and predefined entity
    /// references resolved. Safe: DTDs are refused, so no other entity can be declared, and nothing is
    /// fetched (`XML_PARSE_NONET`).
    static let options = Int32(
        XML_PARSE_NONET.rawValue | XML_PARSE_NOCDATA.rawValue | XML_PARSE_NOERROR.rawValue
            | XML_PARSE_NOWARNING.rawValue | XML_PARSE_NOENT.rawValue)

    /// A context (the header's, or a `StanzaStream`'s) is replaced when its name dictionary grows
    /// beyond this many entries, so a long soak with varied names cannot grow it without bound.
    static let maximumDictionaryEntries = 20_000
    /// Stanza streams kept for different sets of prefixed declarations.
    private static let maximumStreams = 4

    /// The header context (SAX callbacks into `headerBuilder`, which keeps the root), for headers
    /// with an unusual prolog.
    private var headerContext: UnsafeMutablePointer<xmlParserCtxt>
    private let headerBuilder = SAXElementBuilder()
    /// A running push parser with an empty wrapper, for headers with no prolog or a plain XML
    /// declaration (every server's): the start tag and its end tag are one chunk, as a stanza, so a
    /// header costs no document (input buffer, input stream, prolog) of its own.
    private var headerStream: StanzaStream?
    /// Headers read as documents (an unusual prolog, or no running stream to be had): for tests.
    private(set) var documentHeaders = 0
    /// Stanza streams, the most recently used last; SAX callbacks into `builder`.
    private var streams: [StanzaStream] = []
    private let builder = SAXElementBuilder()
    /// How many times a context was replaced because it was worn (`StanzaStream.isWorn`, or the
    /// header context's dictionary) rather than after an error.
    private(set) var contextRenewals = 0
    /// Reused buffer holding a header and the end tag that closes it.
    private var document: [UInt8] = []
    /// The declarations of the last header seen, and what they give the stanza streams.
    private var wrapperNamespaces: [XMLNamespaceDeclaration] = []
    private var prefixedNamespaces: [XMLNamespaceDeclaration] = []
    /// The default namespace of `wrapperNamespaces` ("" for none), given by the builder.
    private var implicitDefault = ""

    /// The bounds applied to headers (namespace declarations); the framer applies the others.
    public let limits: XMLLimits

    public init(limits: XMLLimits = .default) {
        self.limits = limits
        _ = Self.libraryInitialized
        headerBuilder.keepsRoot = true
        headerContext = Self.makeContext(builder: headerBuilder)
    }

    deinit {
        xmlFreeParserCtxt(headerContext)
    }

    /// Parses a stream header (`<stream:stream …>` start tag, optionally preceded by an XML
    /// declaration) as returned in `FramedUnit.streamOpen`.
    ///
    /// - Throws: `XMPPStreamError` of kind `xml-malformed`, `xml-restricted` (DTD), or
    ///   `stream-header-invalid` when the element is not `stream` in `http://etherx.jabber.org/streams`.
    public func parseHeader(_ bytes: [UInt8]) throws(XMPPStreamError) -> StreamHeader {
        guard let name = Self.firstTagName(in: bytes) else {
            throw .invalidHeader("no start tag")
        }
        let plainStart = Self.startOfTagAfterPlainProlog(in: bytes)
        document.removeAll(keepingCapacity: true)
        document.append(contentsOf: bytes[(plainStart ?? 0)...])
        document.append(contentsOf: [UInt8(ascii: "<"), UInt8(ascii: "/")])
        document.append(contentsOf: name)
        document.append(UInt8(ascii: ">"))
        let root: XMLElement
        let declarations: [XMLNamespaceDeclaration]
        if plainStart != nil, let parsed = try parseHeaderOnStream() {
            (root, declarations) = parsed
        } else {
            documentHeaders += 1
            try parseHeaderDocument()
            guard let documentRoot = headerBuilder.root else {
                throw .invalidHeader("no root element")
            }
            (root, declarations) = (documentRoot, headerBuilder.rootDeclarations)
        }
        guard root.name == "stream", root.namespace == XMPPNamespace.streams else {
            throw .invalidHeader("expected <stream> in \(XMPPNamespace.streams), got <\(root.name)> in '\(root.namespace)'")
        }
        guard declarations.count <= limits.maxHeaderNamespaces else {
            throw .namespaceLimit(limits.maxHeaderNamespaces)
        }
        var header = StreamHeader(
            qualifiedName: String(decoding: name, as: UTF8.self),
            from: nil, to: nil, id: nil, version: nil, language: nil, namespaces: declarations)
        // Attribute names come qualified: unprefixed ones are in no namespace, and only `xml:` may name
        // the XML namespace.
        for attribute in root.attributes {
            switch attribute.name {
            case "from": header.from = attribute.value
            case "to": header.to = attribute.value
            case "id": header.id = attribute.value
            case "version": header.version = attribute.value
            case "xml:lang": header.language = attribute.value
            default: break
            }
        }
        // Nearly every server declares exactly these: share one array's storage rather than keep a copy
        // per connection for as long as its stream lives.
        if header.namespaces == Self.clientStreamNamespaces { header.namespaces = Self.clientStreamNamespaces }
        return header
    }

    /// `xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'`, the declarations of a
    /// client stream's header, as one shared array.
    static let clientStreamNamespaces = [
        XMLNamespaceDeclaration(prefix: "", uri: XMPPNamespace.client),
        XMLNamespaceDeclaration(prefix: "stream", uri: XMPPNamespace.streams),
    ]

    /// Parses one complete depth-1 element with `header`'s namespace declarations in scope.
    ///
    /// - Throws: `XMPPStreamError` of kind `xml-malformed` (libxml2's message, or not exactly one
    ///   element) or `xml-restricted` (comment, processing instruction, entity reference).
    public func parseElement(_ bytes: [UInt8], in header: StreamHeader) throws(XMPPStreamError) -> XMLElement {
        try parseElement(bytes, inScopeOf: header.namespaces)
    }

    /// Parses one complete depth-1 element with `namespaces` in scope; see `parseElement(_:in:)`.
    public func parseElement(_ bytes: [UInt8], inScopeOf namespaces: [XMLNamespaceDeclaration]) throws(XMPPStreamError) -> XMLElement {
        let element: Result<XMLElement, XMPPStreamError> = bytes.withUnsafeBytes { raw in
            do throws(XMPPStreamError) {
                return .success(try parseElement(raw, inScopeOf: namespaces))
            } catch {
                return .failure(error)
            }
        }
        return try element.get()
    }

    /// Parses one complete depth-1 element; see `parseElement(_:in:)` taking an array.
    public func parseElement(_ bytes: UnsafeRawBufferPointer, in header: StreamHeader) throws(XMPPStreamError) -> XMLElement {
        try parseElement(bytes, inScopeOf: header.namespaces)
    }

    /// Parses one complete depth-1 element with `namespaces` (a stream header's declarations, which is
    /// all of the header a stream's elements need; a codec keeps just these) in scope.
    public func parseElement(
        _ bytes: UnsafeRawBufferPointer, inScopeOf namespaces: [XMLNamespaceDeclaration]
    ) throws(XMPPStreamError) -> XMLElement {
        if namespaces != wrapperNamespaces {
            wrapperNamespaces = namespaces
            prefixedNamespaces = namespaces.filter { !$0.prefix.isEmpty && $0.prefix != "xml" }
            implicitDefault = namespaces.last { $0.prefix.isEmpty }?.uri ?? ""
        }
        let stream = try stream(declaring: prefixedNamespaces)
        builder.implicitDefault = implicitDefault
        do {
            return try stream.parse(bytes, into: builder)
        } catch {
            discard(stream)
            throw error
        }
    }

    /// The stanza stream whose wrapper declares `prefixed`, made (or renewed when worn) as needed.
    private func stream(declaring prefixed: [XMLNamespaceDeclaration]) throws(XMPPStreamError) -> StanzaStream {
        if let index = streams.lastIndex(where: { $0.prefixed == prefixed }) {
            let stream = streams[index]
            if !stream.isWorn {
                if index != streams.count - 1 { streams.append(streams.remove(at: index)) }
                return stream
            }
            discard(stream)
            contextRenewals += 1
        }
        if streams.count >= Self.maximumStreams { discard(streams[0]) }
        guard let stream = StanzaStream(prefixed: prefixed, builder: builder) else {
            builder.forgetNames()
            throw .malformed("libxml2 refused the stream header's namespace declarations")
        }
        streams.append(stream)
        return stream
    }

    /// Drops `stream` (after an error, or worn): its context is freed with it, so the builder forgets
    /// the names it cached from that context's dictionary.
    private func discard(_ stream: StanzaStream) {
        streams.removeAll { $0 === stream }
        builder.forgetNames()
    }

    // MARK: - libxml2

    /// A document context for headers, configured by `configure`.
    private static func makeContext(builder: SAXElementBuilder) -> UnsafeMutablePointer<xmlParserCtxt> {
        guard let context = xmlNewParserCtxt() else {
            fatalError("libxml2 could not allocate a parser context (out of memory)")
        }
        configure(context, builder: builder)
        return context
    }

    /// Makes `context` refuse DTDs, feed its SAX2 events to `builder` and record its first error
    /// there (the builder outlives the context: the parser owns both).
    static func configure(_ context: UnsafeMutablePointer<xmlParserCtxt>, builder: SAXElementBuilder) {
        // Refuse DTDs: stop the parser as soon as a <!DOCTYPE> is seen, before any declaration in it
        // is processed. The SAX user data is the context itself.
        context.pointee.sax.pointee.internalSubset = { userData, _, _, _ in
            xmlStopParser(userData?.assumingMemoryBound(to: xmlParserCtxt.self))
        }
        // Errors are recorded, never printed. The SAX user data is the context; its _private field
        // points to the builder.
        context.pointee._private = Unmanaged.passUnretained(builder as ParseErrorRecorder).toOpaque()
        context.pointee.sax.pointee.serror = { userData, error in
            guard let context = userData?.assumingMemoryBound(to: xmlParserCtxt.self),
                let recorder = context.pointee._private, let message = error?.pointee.message
            else { return }
            let firstError = Unmanaged<ParseErrorRecorder>.fromOpaque(recorder).takeUnretainedValue()
            if firstError.message == nil {
                firstError.message = String(cString: message)
            }
        }
        SAXElementBuilder.install(on: context)
    }

    /// Parses `document` (a header and its end tag) on the header context into `headerBuilder`,
    /// renewing the context first when its name dictionary has grown too large.
    private func parseHeaderDocument() throws(XMPPStreamError) {
        if xmlDictSize(headerContext.pointee.dict) > Self.maximumDictionaryEntries {
            xmlFreeParserCtxt(headerContext)
            headerBuilder.forgetNames()
            headerContext = Self.makeContext(builder: headerBuilder)
            contextRenewals += 1
        }
        headerBuilder.use(dictionary: headerContext.pointee.dict)
        headerBuilder.reset()
        let doc = document.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                xmlCtxtReadMemory(headerContext, chars.baseAddress, Int32(chars.count), nil, nil, Self.options)
            }
        }
        if let doc { xmlFreeDoc(doc) }  // none is built; defensive
        try Self.checkParse(of: headerContext, into: headerBuilder)
    }

    /// Parses `document` (a header without prolog and its end tag) as the one element inside
    /// `headerStream`'s wrapper; nil when no stream can be made (then the document path runs).
    private func parseHeaderOnStream() throws(XMPPStreamError) -> (XMLElement, [XMLNamespaceDeclaration])? {
        if let stream = headerStream, stream.isWorn {
            headerStream = nil
            builder.forgetNames()
            contextRenewals += 1
        }
        if headerStream == nil { headerStream = StanzaStream(prefixed: [], builder: builder) }
        guard let stream = headerStream else { return nil }
        builder.implicitDefault = ""
        builder.keepsDeclarations = true
        defer { builder.keepsDeclarations = false }
        let parsed: Result<XMLElement, XMPPStreamError> = document.withUnsafeBytes { bytes in
            Result { () throws(XMPPStreamError) in try stream.parse(bytes, into: builder) }
        }
        switch parsed {
        case .success(let element):
            return (element, builder.rootDeclarations)
        case .failure(let error):
            headerStream = nil
            builder.forgetNames()
            throw error
        }
    }

    /// Throws what stopped or spoiled the parse just run on `context`, if anything did.
    static func checkParse(of context: UnsafeMutablePointer<xmlParserCtxt>, into builder: SAXElementBuilder) throws(XMPPStreamError) {
        if let restricted = builder.restricted { throw .restricted(restricted) }
        if builder.tooDeep { throw .malformed(errorMessage(context: context, recorder: builder)) }
        if context.pointee.errNo == Int32(XML_ERR_USER_STOP.rawValue) { throw .restricted("DTD (<!DOCTYPE>)") }
        guard context.pointee.wellFormed != 0, context.pointee.nsWellFormed != 0 else {
            throw .malformed(errorMessage(context: context, recorder: builder))
        }
    }

    private static func errorMessage(context: UnsafeMutablePointer<xmlParserCtxt>, recorder: ParseErrorRecorder) -> String {
        var text: String
        if let first = recorder.message {
            text = first
        } else if let error = xmlCtxtGetLastError(context), let message = error.pointee.message {
            text = String(cString: message)
        } else {
            return "libxml2 reported an unknown error"
        }
        while text.last?.isNewline == true {
            text.removeLast()
        }
        return text
    }

    // MARK: - Header

    /// XML declarations that say nothing a parser must act on (the version every parser reads, UTF-8).
    private static let plainDeclarations: [[UInt8]] = ["'", "\""].flatMap { quote in
        [
            "<?xml version=\(quote)1.0\(quote)?>", "<?xml version=\(quote)1.0\(quote) encoding=\(quote)UTF-8\(quote)?>",
            "<?xml version=\(quote)1.0\(quote) encoding=\(quote)utf-8\(quote)?>",
        ].map { Array($0.utf8) }
    }

    /// Where the start tag begins when what comes before it is nothing, whitespace, or one of
    /// `plainDeclarations`; nil for any other prolog (a DOCTYPE, a comment, another declaration),
    /// which the document path judges.
    private static func startOfTagAfterPlainProlog(in bytes: [UInt8]) -> Int? {
        var index = 0
        func skipWhitespace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 || bytes[index] == 0x0A || bytes[index] == 0x0D {
                index += 1
            }
        }
        // A declaration comes first or not at all (whitespace may follow it, or start a document without one).
        if let declaration = plainDeclarations.first(where: { bytes.starts(with: $0) }) { index = declaration.count }
        skipWhitespace()
        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "<"), bytes[index + 1] != UInt8(ascii: "?"),
            bytes[index + 1] != UInt8(ascii: "!")
        else { return nil }
        return index
    }

    /// The name of the first start tag in `bytes` (after an optional XML declaration and whitespace).
    private static func firstTagName(in bytes: [UInt8]) -> ArraySlice<UInt8>? {
        var index = 0
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "<") else {
                index += 1
                continue
            }
            let start = index + 1
            guard start < bytes.count, bytes[start] != UInt8(ascii: "?"), bytes[start] != UInt8(ascii: "!") else {
                index += 1
                continue
            }
            var end = start
            while end < bytes.count {
                let byte = bytes[end]
                if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == UInt8(ascii: ">")
                    || byte == UInt8(ascii: "/")
                {
                    break
                }
                end += 1
            }
            return end > start ? bytes[start..<end] : nil
        }
        return nil
    }
}
