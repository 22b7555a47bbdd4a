import CLibXML2

/// Builds the `XMLElement` of one stanza straight from libxml2's SAX2 events, for
/// `StanzaParser.parseElement`: no libxml2 tree is built, walked and freed per stanza.
///
/// Depth 1 is `StanzaParser`'s synthetic wrapper that carries the stream's prefixed namespace
/// declarations; the stanza is the one element at depth 2. The stream's default namespace is not
/// declared there (libxml2 2.9 parses every declared namespace URI with `xmlParseURI`, several
/// allocations each, to warn about relative ones): it is `implicitDefault`, given to every unprefixed
/// element libxml2 leaves without a namespace unless that element or an ancestor declares a default
/// namespace itself (`xmlns='…'`, including `xmlns=''`, which libxml2 then applies). Text or a
/// second element beside the stanza is malformed; comments, processing instructions and entity references stop the parse as restricted XML
/// (RFC 6120 §11.1). Element and attribute names and namespace URIs come from the parser context's
/// name dictionary, so their Swift strings are made once per dictionary entry and reused (`names`);
/// the cache is dropped with the context. Attribute values and text are never cached.
///
/// Owned by one `StanzaParser`, reached from the C callbacks through the context's `_private`; as a
/// `ParseErrorRecorder` it also keeps libxml2's first error message of the parse.
final class SAXElementBuilder: ParseErrorRecorder {
    /// What restricted construct stopped the parse, if one did.
    var restricted: String?
    /// Elements nested deeper than `maximumDepth` stopped the parse (malformed, as libxml2 has it).
    private(set) var tooDeep = false
    /// libxml2's own limit for documents (`xmlParserMaxDepth`), counting the wrapper.
    static let maximumDepth = 256
    private(set) var result: XMLElement?
    /// Something other than exactly one element inside the wrapper.
    private(set) var extraContent = false
    /// The elements being built, outermost first.
    private var open: [XMLElement] = []
    /// The children of all of `open`, in document order, not yet given to their parents; each open
    /// element's start in `childStart`. An element gets its children in one exactly-sized array when it
    /// ends, instead of an array grown child by child (one allocation instead of one per doubling).
    private var pendingChildren: [XMLNode] = []
    private var childStart: [Int] = []
    /// The depth of the element being parsed (the wrapper is 1, a stanza 2).
    private(set) var depth = 0
    /// Swift strings of names and URIs owned by a live context's dictionary, by address (addresses
    /// are unique among the dictionaries alive; `forgetNames` when one is freed).
    private var names: [UnsafeRawPointer: String] = [:]
    /// The dictionary of the context being parsed with.
    private var dictionary: xmlDictPtr?
    /// The stream's default namespace (interned; "" for none), set before each parse.
    var implicitDefault = ""
    /// Depths of the open elements that declare a default namespace: while any is open, libxml2's
    /// resolution stands and `implicitDefault` does not apply.
    private var declaringDepths: [Int] = []
    /// When set, the depth-1 element is kept as `root` (its namespace declarations in
    /// `rootDeclarations`) instead of skipped as the wrapper: how `StanzaParser.parseHeader` reads a
    /// stream header without building a libxml2 tree.
    var keepsRoot = false
    private(set) var root: XMLElement?
    private(set) var rootDeclarations: [XMLNamespaceDeclaration] = []
    /// When set, the namespace declarations of the element at depth 2 (the one element inside a
    /// running wrapper) are kept in `rootDeclarations`: how `StanzaParser` reads a stream header on a
    /// `StanzaStream`.
    var keepsDeclarations = false

    /// Parses next with the context owning `dictionary` (cached names of other live dictionaries stay
    /// valid: their addresses cannot recur while those live).
    func use(dictionary: xmlDictPtr?) {
        self.dictionary = dictionary
    }

    /// Drops every cached name: a context (and its dictionary, whose addresses a new one may reuse)
    /// is about to be freed.
    func forgetNames() {
        names.removeAll()
    }

    /// Prepares for the next parse, which starts inside `depth` open elements (0 for a document, 1
    /// inside a push parser's running wrapper element).
    func reset(depth: Int = 0) {
        message = nil
        restricted = nil
        tooDeep = false
        result = nil
        extraContent = false
        open.removeAll(keepingCapacity: true)
        pendingChildren.removeAll(keepingCapacity: true)
        childStart.removeAll(keepingCapacity: true)
        declaringDepths.removeAll(keepingCapacity: true)
        self.depth = depth
        root = nil
        rootDeclarations = []
    }

    /// The Swift string of a name or URI: cached when the dictionary owns it (stable pointer).
    private func name(_ pointer: UnsafePointer<xmlChar>) -> String {
        let key = UnsafeRawPointer(pointer)
        if let cached = names[key] { return cached }
        let string = XMPPNamespace.interned(String(cString: pointer))
        if let dictionary, xmlDictOwns(dictionary, pointer) == 1 { names[key] = string }
        return string
    }

    func startElement(
        context: UnsafeMutablePointer<xmlParserCtxt>?, localName: UnsafePointer<xmlChar>?, prefix: UnsafePointer<xmlChar>?,
        uri: UnsafePointer<xmlChar>?,
        namespaceCount: Int, namespaces: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?, attributeCount: Int,
        attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
    ) {
        depth += 1
        if depth > Self.maximumDepth {
            // libxml2 2.9 checks its depth limit only when it parses a whole document, not in push mode.
            if message == nil { message = "Excessive depth in document: \(Self.maximumDepth)" }
            tooDeep = true
            return xmlStopParser(context)
        }
        if let namespaces, namespaceCount > 0 {
            // Two pointers per declaration: prefix (nil for the default namespace), URI.
            for index in 0..<namespaceCount where namespaces[2 * index] == nil {
                declaringDepths.append(depth)
                break
            }
        }
        guard let localName, depth > 1 || keepsRoot else { return }
        let namespace = uri.map(name) ?? (prefix == nil && declaringDepths.isEmpty ? implicitDefault : "")
        var element = XMLElement(name(localName), namespace: namespace, attributes: [])
        if attributeCount > 0, let attributes {
            element.attributes.reserveCapacity(attributeCount)
            for index in 0..<attributeCount {
                // Five pointers per attribute: local name, prefix, URI, value start, value end.
                let base = attributes + 5 * index
                guard let local = base[0], let start = base[3], let end = base[4] else { continue }
                let qualifiedName = base[1].map { name($0) + ":" + name(local) } ?? name(local)
                let value = String(decoding: UnsafeBufferPointer(start: start, count: end - start), as: UTF8.self)
                element.attributes.append(XMLAttribute(qualifiedName, value))
            }
        }
        guard depth > 1 else {
            root = element
            keepDeclarations(namespaces, count: namespaceCount)
            return
        }
        if keepsDeclarations, depth == 2 { keepDeclarations(namespaces, count: namespaceCount) }
        open.append(element)
        childStart.append(pendingChildren.count)
    }

    /// Appends an element's namespace declarations (two pointers each: prefix, nil for the default
    /// namespace, and URI) to `rootDeclarations`.
    private func keepDeclarations(_ namespaces: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?, count: Int) {
        guard let namespaces else { return }
        for index in 0..<count {
            rootDeclarations.append(
                XMLNamespaceDeclaration(prefix: namespaces[2 * index].map(name) ?? "", uri: namespaces[2 * index + 1].map(name) ?? ""))
        }
    }

    func endElement() {
        defer {
            if declaringDepths.last == depth { declaringDepths.removeLast() }
            depth -= 1
        }
        guard depth > 1, var element = open.popLast(), let start = childStart.popLast() else { return }
        if start < pendingChildren.count {
            element.children = Array(pendingChildren[start...])
            pendingChildren.removeSubrange(start...)
        }
        if open.isEmpty {
            if result == nil { result = element } else { extraContent = true }
        } else {
            pendingChildren.append(.element(element))
        }
    }

    func characters(_ bytes: UnsafePointer<xmlChar>?, count: Int) {
        guard let bytes, count > 0 else { return }
        guard let start = childStart.last else {
            extraContent = true
            return
        }
        let text = String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
        if pendingChildren.count > start, case .text(let previous) = pendingChildren[pendingChildren.count - 1] {
            pendingChildren[pendingChildren.count - 1] = .text(previous + text)
        } else {
            pendingChildren.append(.text(text))
        }
    }

    /// Installs the SAX2 callbacks that feed the builder found in the context's `_private`.
    static func install(on context: UnsafeMutablePointer<xmlParserCtxt>) {
        guard let sax = context.pointee.sax else { return }
        // No document is created: the builder is the tree.
        sax.pointee.startDocument = nil
        sax.pointee.endDocument = nil
        sax.pointee.startElementNs = { userData, localName, prefix, uri, namespaceCount, namespaces, attributeCount, _, attributes in
            SAXElementBuilder.builder(userData)?.startElement(
                context: userData?.assumingMemoryBound(to: xmlParserCtxt.self), localName: localName, prefix: prefix, uri: uri,
                namespaceCount: Int(namespaceCount), namespaces: namespaces,
                attributeCount: Int(attributeCount), attributes: attributes)
        }
        sax.pointee.endElementNs = { userData, _, _, _ in SAXElementBuilder.builder(userData)?.endElement() }
        sax.pointee.characters = { userData, bytes, count in SAXElementBuilder.builder(userData)?.characters(bytes, count: Int(count)) }
        sax.pointee.ignorableWhitespace = sax.pointee.characters
        sax.pointee.cdataBlock = sax.pointee.characters
        sax.pointee.comment = { userData, _ in SAXElementBuilder.stop(userData, restricted: "comment") }
        sax.pointee.processingInstruction = { userData, _, _ in SAXElementBuilder.stop(userData, restricted: "processing instruction") }
        sax.pointee.reference = { userData, _ in SAXElementBuilder.stop(userData, restricted: "entity reference") }
    }

    fileprivate static func builder(_ userData: UnsafeMutableRawPointer?) -> SAXElementBuilder? {
        guard let context = userData?.assumingMemoryBound(to: xmlParserCtxt.self), let owner = context.pointee._private else {
            return nil
        }
        return Unmanaged<SAXElementBuilder>.fromOpaque(owner).takeUnretainedValue()
    }

    fileprivate static func stop(_ userData: UnsafeMutableRawPointer?, restricted: String) {
        guard let builder = builder(userData) else { return }
        if builder.restricted == nil { builder.restricted = restricted }
        xmlStopParser(userData?.assumingMemoryBound(to: xmlParserCtxt.self))
    }
}

/// Keeps the first error libxml2 reports during a parse (its last one is often only a consequence,
/// such as "Premature end of data" after a tag mismatch). Reached from libxml2's structured-error
/// callback through the context's `_private`.
class ParseErrorRecorder {
    var message: String?
}
