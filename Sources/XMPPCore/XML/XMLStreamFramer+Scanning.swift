// How the framer finds unit boundaries: its scan state and the byte-by-byte scanner.

extension XMLStreamFramer {
    /// `XMLLimits` in 14 bytes, so the per-session framer stays a few words (values clamp to the
    /// field widths: 4 GiB, 65,535).
    struct Bounds: Sendable {
        var elementBytes: UInt32
        var bufferedBytes: UInt32
        var depth: UInt16
        var attributes: UInt16
        var headerNamespaces: UInt16

        init(_ limits: XMLLimits) {
            elementBytes = UInt32(clamping: limits.maxElementBytes)
            bufferedBytes = UInt32(clamping: limits.maxBufferedBytes)
            depth = UInt16(clamping: limits.maxDepth)
            attributes = UInt16(clamping: limits.maxAttributesPerElement)
            headerNamespaces = UInt16(clamping: limits.maxHeaderNamespaces)
        }
    }

    /// Where the stream is, as far as framing is concerned.
    enum Phase: Sendable, Equatable {
        case expectingHeader(declarationSeen: Bool)
        case inStream
        case closed
    }

    /// Lexical state at `scanIndex`.
    enum Lexer: Sendable, Equatable {
        /// Character data, or whitespace between units at stream level.
        case content
        /// Just after `<`.
        case markupOpen
        /// Inside a start tag, outside attribute values.
        case startTag
        /// Inside an attribute value delimited by the given quote byte.
        case quoted(UInt8)
        /// Inside an end tag.
        case endTag
        /// Just after `<!`: a CDATA section (allowed), a comment or DTD (rejected).
        case markupDeclaration
        /// Inside a CDATA section; counts the `]` seen just before (at most 2).
        case cdata(closingBrackets: UInt8)
        /// Just after `<?`: only `<?xml ` before the header is accepted.
        case processingInstruction
        /// Inside the XML declaration; whether the previous byte was `?`.
        case xmlDeclaration(questionMark: Bool)
    }

    /// Length and FNV-1a hash of the stream element's qualified name (e.g. `stream:stream`), so the
    /// close tag can be recognised without keeping the name on the heap.
    struct NameFingerprint: Sendable, Equatable {
        var length: Int32
        var hash: UInt32

        init(_ bytes: UnsafeBufferPointer<UInt8>) {
            var hash: UInt32 = 2_166_136_261
            for byte in bytes {
                hash = (hash ^ UInt32(byte)) &* 16_777_619
            }
            self.length = Int32(truncatingIfNeeded: bytes.count)
            self.hash = hash
        }
    }

    /// The scan position; separate from `buffer` so the scan can run on the buffer's raw storage.
    struct Cursor: Sendable {
        /// Index of the first byte of the unit being scanned (or of unconsumed whitespace).
        var unitStart = 0
        /// Index of the next byte to examine.
        var scanIndex = 0
        /// Open elements inside the current depth-1 element; 0 at stream level.
        var depth = 0
        /// Attribute values opened in the current start tag.
        var attributes: Int32 = 0
        var lexer = Lexer.content
        var phase = Phase.expectingHeader(declarationSeen: false)
        var streamName: NameFingerprint?
    }

    enum ScanResult {
        case needMoreBytes
        case streamOpen(Range<Int>)
        case element(Range<Int>)
        case streamClose
        case failure(XMPPStreamError)
    }

    // MARK: - Scanning

    private static let cdataOpening = Array("[CDATA[".utf8)
    private static let commentOpening = Array("--".utf8)
    private static let doctypeOpening = Array("DOCTYPE".utf8)
    private static let declarationTarget = Array("xml".utf8)

    /// Scans from `cursor.scanIndex` until a unit completes, the bytes run out, or a rule is broken.
    static func scan(_ bytes: UnsafeBufferPointer<UInt8>, cursor: inout Cursor, bounds: Bounds) -> ScanResult {
        var index = cursor.scanIndex
        defer { cursor.scanIndex = index }
        let limit = Int(bounds.elementBytes)
        while index < bytes.count {
            if index - cursor.unitStart >= limit {
                return .failure(.tooLarge(limit: limit))
            }
            let byte = bytes[index]
            switch cursor.lexer {
            case .content:
                if byte == UInt8(ascii: "<") {
                    if cursor.depth == 0 {
                        cursor.unitStart = index
                    }
                    cursor.lexer = .markupOpen
                } else if cursor.depth == 0 {
                    guard isWhitespace(byte) else {
                        return .failure(unexpectedText(in: cursor.phase))
                    }
                    cursor.unitStart = index + 1
                }

            case .markupOpen:
                switch byte {
                case UInt8(ascii: "/"):
                    if cursor.depth == 0 && cursor.phase != .inStream {
                        return .failure(unexpectedMarkup(in: cursor.phase, "an end tag"))
                    }
                    cursor.lexer = .endTag
                case UInt8(ascii: "!"):
                    cursor.lexer = .markupDeclaration
                case UInt8(ascii: "?"):
                    guard cursor.depth == 0, cursor.phase == .expectingHeader(declarationSeen: false) else {
                        return .failure(.restricted("processing instruction"))
                    }
                    cursor.lexer = .processingInstruction
                default:
                    guard isNameStart(byte) else {
                        return .failure(.malformed("invalid character after '<'"))
                    }
                    if cursor.depth == 0 && cursor.phase == .closed {
                        return .failure(.dataAfterClose)
                    }
                    cursor.attributes = 0
                    cursor.lexer = .startTag
                }

            case .startTag:
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "'"):
                    cursor.attributes += 1
                    if cursor.attributes > Int32(bounds.attributes) {
                        return .failure(.attributeLimit(Int(bounds.attributes)))
                    }
                    cursor.lexer = .quoted(byte)
                case UInt8(ascii: "<"):
                    return .failure(.malformed("'<' inside a tag"))
                case UInt8(ascii: ">"):
                    cursor.lexer = .content
                    let selfClosing = bytes[index - 1] == UInt8(ascii: "/")
                    if case .expectingHeader = cursor.phase {
                        if selfClosing {
                            return .failure(.invalidHeader("the stream element is self-closing"))
                        }
                        let name = qualifiedName(in: bytes, from: cursor.unitStart + 1)
                        cursor.streamName = NameFingerprint(name)
                        cursor.phase = .inStream
                        let range = cursor.unitStart..<(index + 1)
                        index += 1
                        cursor.unitStart = index
                        return .streamOpen(range)
                    }
                    if !selfClosing {
                        cursor.depth += 1
                        if cursor.depth > Int(bounds.depth) {
                            return .failure(.depthLimit(Int(bounds.depth)))
                        }
                    }
                    if cursor.depth == 0 {
                        let range = cursor.unitStart..<(index + 1)
                        index += 1
                        cursor.unitStart = index
                        return .element(range)
                    }
                default:
                    break
                }

            case .quoted(let quote):
                if byte == quote {
                    cursor.lexer = .startTag
                } else if byte == UInt8(ascii: "<") {
                    return .failure(.malformed("'<' inside an attribute value"))
                }

            case .endTag:
                if byte == UInt8(ascii: ">") {
                    cursor.lexer = .content
                    if cursor.depth == 0 {
                        let name = qualifiedName(in: bytes, from: cursor.unitStart + 2)
                        guard cursor.streamName == NameFingerprint(name) else {
                            return .failure(.unbalanced)
                        }
                        cursor.phase = .closed
                        index += 1
                        cursor.unitStart = index
                        return .streamClose
                    }
                    cursor.depth -= 1
                    if cursor.depth == 0 {
                        let range = cursor.unitStart..<(index + 1)
                        index += 1
                        cursor.unitStart = index
                        return .element(range)
                    }
                } else if byte == UInt8(ascii: "<") {
                    return .failure(.malformed("'<' inside an end tag"))
                }

            case .markupDeclaration:
                switch match(bytes, at: index, against: [cdataOpening, commentOpening, doctypeOpening]) {
                case .incomplete:
                    return .needMoreBytes
                case .matched(0):
                    if cursor.depth == 0 {
                        return .failure(unexpectedText(in: cursor.phase))
                    }
                    index += cdataOpening.count
                    cursor.lexer = .cdata(closingBrackets: 0)
                    continue
                case .matched(1):
                    return .failure(.restricted("comment"))
                case .matched:
                    return .failure(.restricted("DTD (<!DOCTYPE>)"))
                case .none:
                    return .failure(.restricted("markup declaration"))
                }

            case .cdata(let brackets):
                if byte == UInt8(ascii: "]") {
                    cursor.lexer = .cdata(closingBrackets: min(brackets + 1, 2))
                } else if byte == UInt8(ascii: ">") && brackets == 2 {
                    cursor.lexer = .content
                } else if brackets != 0 {
                    cursor.lexer = .cdata(closingBrackets: 0)
                }

            case .processingInstruction:
                switch match(bytes, at: index, against: [declarationTarget]) {
                case .incomplete:
                    return .needMoreBytes
                case .matched:
                    let after = index + declarationTarget.count
                    guard after < bytes.count else {
                        return .needMoreBytes
                    }
                    guard isWhitespace(bytes[after]) else {
                        return .failure(.restricted("processing instruction"))
                    }
                    index = after + 1
                    cursor.lexer = .xmlDeclaration(questionMark: false)
                    continue
                case .none:
                    return .failure(.restricted("processing instruction"))
                }

            case .xmlDeclaration(let questionMark):
                if byte == UInt8(ascii: ">") && questionMark {
                    cursor.lexer = .content
                    cursor.phase = .expectingHeader(declarationSeen: true)
                    cursor.unitStart = index + 1
                } else {
                    cursor.lexer = .xmlDeclaration(questionMark: byte == UInt8(ascii: "?"))
                }
            }
            index += 1
        }
        return .needMoreBytes
    }

    enum PrefixMatch: Equatable {
        case matched(Int)
        case incomplete
        case none
    }

    /// Which of `candidates` the bytes at `index` start with; `.incomplete` when the available bytes
    /// are a proper prefix of some candidate.
    private static func match(
        _ bytes: UnsafeBufferPointer<UInt8>, at index: Int, against candidates: [[UInt8]]
    ) -> PrefixMatch {
        let available = bytes.count - index
        var incomplete = false
        for (number, candidate) in candidates.enumerated() {
            let count = min(available, candidate.count)
            var equal = true
            for offset in 0..<count where bytes[index + offset] != candidate[offset] {
                equal = false
                break
            }
            guard equal else { continue }
            if count == candidate.count {
                return .matched(number)
            }
            incomplete = true
        }
        return incomplete ? .incomplete : .none
    }

    /// The tag name starting at `start`, up to whitespace, `/` or `>`.
    private static func qualifiedName(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> UnsafeBufferPointer<UInt8> {
        var end = start
        while end < bytes.count {
            let byte = bytes[end]
            if isWhitespace(byte) || byte == UInt8(ascii: "/") || byte == UInt8(ascii: ">") {
                break
            }
            end += 1
        }
        return UnsafeBufferPointer(rebasing: bytes[start..<end])
    }

    private static func unexpectedText(in phase: Phase) -> XMPPStreamError {
        switch phase {
        case .expectingHeader: .invalidHeader("text before the stream header")
        case .inStream: .unexpectedText
        case .closed: .dataAfterClose
        }
    }

    private static func unexpectedMarkup(in phase: Phase, _ what: String) -> XMPPStreamError {
        switch phase {
        case .expectingHeader: .invalidHeader("\(what) before the stream header")
        case .inStream: .unbalanced
        case .closed: .dataAfterClose
        }
    }

    /// XML's `S` production: space, tab, CR, LF.
    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    /// Bytes that may start an XML name: ASCII letters, `_`, `:` and any non-ASCII UTF-8 byte.
    private static func isNameStart(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":") || byte >= 0x80
    }
}
