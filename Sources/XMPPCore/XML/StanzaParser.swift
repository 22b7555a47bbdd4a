import CLibXML2

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Parses complete stream headers and depth-1 elements (as cut out by `XMLStreamFramer`) into
/// `StreamHeader` and `XMLElement` values, using one reused libxml2 parser context whose SAX2 events
/// build the values straight away (`SAXElementBuilder`: no libxml2 tree to build, walk and free per
/// stanza or header; a header is the document's root, kept with its declarations).
///
/// One per event loop (the context costs ~12.7 KB; sessions share it): not `Sendable`, use it from one
/// thread at a time. Each element is parsed with the stream header's namespace declarations in scope,
/// by wrapping it in a synthetic root element that carries them, so `<stream:features>` resolves to
/// `http://etherx.jabber.org/streams` and an unprefixed `<message>` to `jabber:client`. The wrapper
/// carries only the prefixed declarations the element can use (those whose `prefix:` occurs in its
/// bytes), so a header's declarations are not re-parsed with every stanza; the default namespace is
/// never declared there but given by the builder (`SAXElementBuilder.implicitDefault`);
/// and a header with more than `XMLLimits.maxHeaderNamespaces` declarations is refused
/// (`xml-limit-namespaces`).
///
/// Safety: no network access (`XML_PARSE_NONET`), no entity substitution beyond the predefined
/// entities and character references, DTDs refused (the parser stops at `<!DOCTYPE`), comments,
/// processing instructions and entity references refused as restricted XML (RFC 6120 §11.1),
/// libxml2's default depth and size limits kept. Malformed input throws `XMPPStreamError` carrying
/// libxml2's message.
public final class StanzaParser {
    private static let libraryInitialized: Void = xmlInitParser()

    /// Options for every parse: see the type's documentation. Entities are substituted
    /// (`XML_PARSE_NOENT`), so SAX hands over attribute values with character and predefined entity
    /// references resolved. Safe: DTDs are refused, so no other entity can be declared, and nothing is
    /// fetched (`XML_PARSE_NONET`).
    private static let options = Int32(
        XML_PARSE_NONET.rawValue | XML_PARSE_NOCDATA.rawValue | XML_PARSE_NOERROR.rawValue
            | XML_PARSE_NOWARNING.rawValue | XML_PARSE_NOENT.rawValue)

    /// The context is replaced when its name dictionary grows beyond this many entries, so a long soak
    /// with varied element names cannot grow it without bound.
    private static let maximumDictionaryEntries = 20_000

    /// The one parser context (SAX callbacks into `builder`).
    private var context: UnsafeMutablePointer<xmlParserCtxt>
    private let builder = SAXElementBuilder()
    /// How many times the context was replaced because its dictionary grew too large.
    private(set) var contextRenewals = 0
    /// Reused buffer holding wrapper start tag + element + wrapper end tag.
    private var document: [UInt8] = []
    /// Namespace declarations and the wrapper start tag built from them for the last header seen.
    private var wrapperNamespaces: [XMLNamespaceDeclaration] = []
    /// Which of `wrapperNamespaces` the wrapper start tag declares.
    private var wrapperSelection: [Bool]? = []
    private var wrapperOpening: [UInt8] = Array("<w>".utf8)
    private static let wrapperClosing: [UInt8] = Array("</w>".utf8)
    /// `prefix:` for each of `wrapperNamespaces` (empty for the default namespace and `xml`).
    private var prefixPatterns: [[UInt8]] = []
    /// The default namespace of `wrapperNamespaces` ("" for none), given by the builder.
    private var implicitDefault = ""
    /// The selection computed for the element being parsed (reused storage).
    private var selection: [Bool] = []

    /// The bounds applied to headers (namespace declarations); the framer applies the others.
    public let limits: XMLLimits

    public init(limits: XMLLimits = .default) {
        self.limits = limits
        _ = Self.libraryInitialized
        context = Self.makeContext(builder: builder)
    }

    deinit {
        xmlFreeParserCtxt(context)
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
        document.removeAll(keepingCapacity: true)
        document.append(contentsOf: bytes)
        document.append(contentsOf: [UInt8(ascii: "<"), UInt8(ascii: "/")])
        document.append(contentsOf: name)
        document.append(UInt8(ascii: ">"))
        builder.keepsRoot = true
        builder.implicitDefault = ""
        defer { builder.keepsRoot = false }
        try parseDocument()
        guard let root = builder.root else {
            throw .invalidHeader("no root element")
        }
        guard root.name == "stream", root.namespace == XMPPNamespace.streams else {
            throw .invalidHeader("expected <stream> in \(XMPPNamespace.streams), got <\(root.name)> in '\(root.namespace)'")
        }
        guard builder.rootDeclarations.count <= limits.maxHeaderNamespaces else {
            throw .namespaceLimit(limits.maxHeaderNamespaces)
        }
        var header = StreamHeader(
            qualifiedName: String(decoding: name, as: UTF8.self),
            from: nil, to: nil, id: nil, version: nil, language: nil, namespaces: builder.rootDeclarations)
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
            prefixPatterns = namespaces.map { declaration in
                declaration.prefix.isEmpty || declaration.prefix == "xml" ? [] : Array((declaration.prefix + ":").utf8)
            }
            implicitDefault = namespaces.last { $0.prefix.isEmpty }?.uri ?? ""
            wrapperSelection = nil
        }
        selection.removeAll(keepingCapacity: true)
        for pattern in prefixPatterns {
            selection.append(!pattern.isEmpty && Self.contains(bytes, pattern))
        }
        if selection != wrapperSelection {
            rebuildWrapper()
        }
        document.removeAll(keepingCapacity: true)
        document.append(contentsOf: wrapperOpening)
        document.append(contentsOf: bytes)
        document.append(contentsOf: Self.wrapperClosing)
        builder.implicitDefault = implicitDefault
        try parseDocument()
        guard let element = builder.result, !builder.extraContent else {
            throw .malformed("expected exactly one element")
        }
        return element
    }

    // MARK: - libxml2

    /// A parser context that refuses DTDs, feeds its SAX2 events to `builder` and records its first
    /// error there (the builder outlives the context: the parser owns both).
    private static func makeContext(builder: SAXElementBuilder) -> UnsafeMutablePointer<xmlParserCtxt> {
        guard let context = xmlNewParserCtxt() else {
            fatalError("libxml2 could not allocate a parser context (out of memory)")
        }
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
        builder.use(dictionary: context.pointee.dict)
        return context
    }

    /// Parses `document` with the reused context into `builder`, renewing the context first when its
    /// name dictionary has grown too large.
    private func parseDocument() throws(XMPPStreamError) {
        if xmlDictSize(context.pointee.dict) > Self.maximumDictionaryEntries {
            xmlFreeParserCtxt(context)
            context = Self.makeContext(builder: builder)
            contextRenewals += 1
        }
        builder.reset()
        let doc = document.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                xmlCtxtReadMemory(context, chars.baseAddress, Int32(chars.count), nil, nil, Self.options)
            }
        }
        if let doc { xmlFreeDoc(doc) }  // none is built; defensive
        if let restricted = builder.restricted { throw .restricted(restricted) }
        if context.pointee.errNo == Int32(XML_ERR_USER_STOP.rawValue) { throw .restricted("DTD (<!DOCTYPE>)") }
        guard context.pointee.wellFormed != 0, context.pointee.nsWellFormed != 0 else {
            throw .malformed(Self.errorMessage(context: context, recorder: builder))
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

    /// Whether `pattern` (non-empty) occurs in `bytes`: memchr for its first byte, then a compare.
    private static func contains(_ bytes: UnsafeRawBufferPointer, _ pattern: [UInt8]) -> Bool {
        guard let base = bytes.baseAddress, let first = pattern.first, bytes.count >= pattern.count else { return false }
        let lastStart = bytes.count - pattern.count
        var start = 0
        return pattern.withUnsafeBytes { needle in
            while start <= lastStart {
                guard let hit = memchr(base + start, Int32(first), lastStart - start + 1) else { return false }
                let offset = base.distance(to: UnsafeRawPointer(hit))
                if memcmp(base + offset, needle.baseAddress!, pattern.count) == 0 { return true }
                start = offset + 1
            }
            return false
        }
    }

    /// The wrapper start tag declaring the selected namespaces of the current header: only prefixed
    /// ones other than `xml` are ever selected (their `prefixPatterns` are not empty).
    private func rebuildWrapper() {
        var opening = Array("<w".utf8)
        for (declaration, selected) in zip(wrapperNamespaces, selection) where selected {
            opening.append(UInt8(ascii: " "))
            XMLEscaping.appendRaw("xmlns:" + declaration.prefix, to: &opening)
            opening.append(contentsOf: [UInt8(ascii: "="), UInt8(ascii: "'")])
            XMLEscaping.appendAttributeValue(declaration.uri, to: &opening)
            opening.append(UInt8(ascii: "'"))
        }
        opening.append(UInt8(ascii: ">"))
        wrapperOpening = opening
        wrapperSelection = selection
    }

    // MARK: - Header

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
