// The framer's face: bytes in, whole units out, restart after STARTTLS and SASL; its buffer.

/// Cuts an XMPP stream's bytes into its header, depth-1 elements and close tag, without parsing them.
///
/// One per session, so it is deliberately small: a few words of scan state plus the bytes of the
/// unit that is not complete yet. Bytes of units already returned are dropped, and when nothing is
/// buffered the storage is released, so an idle session holds no heap memory here.
///
/// Feed bytes with `append(_:)` in whatever chunks they arrive, then call `next()` until it returns
/// `nil` (more bytes needed). Scanning resumes where it stopped, so drip-fed input costs O(n) in
/// total. Exactly one unit comes out per depth-1 element however the bytes were chunked.
///
/// The framer knows only what it needs to find element boundaries: tags, quoted attribute values
/// (which may contain `>` and `/>`), self-closing tags, CDATA sections and nesting depth.
/// Well-formedness beyond that (matching tag names, entities, encoding, namespaces) is checked by
/// `StanzaParser`. It rejects, with a typed `XMPPStreamError`, what an XMPP stream must not contain:
/// comments, processing instructions other than the initial XML declaration, DTDs, end tags at stream
/// level that do not close the stream, non-whitespace text between depth-1 elements; and, per
/// `XMLLimits`, units larger than `maxElementBytes`, more unreturned bytes than `maxBufferedBytes`,
/// nesting deeper than `maxDepth` and start tags with more than `maxAttributesPerElement` attributes
/// (`xml-limit-*` kinds), so a hostile server costs each session bounded work and memory. After an error the framer stays failed (every `next()` throws that error)
/// until `restart()`.
///
/// Whitespace between depth-1 elements (keepalives) is skipped. After STARTTLS `<proceed/>` and after
/// SASL `<success/>`, call `restart()`: the framer then expects a new stream header.
public struct XMLStreamFramer: Sendable {
    private let bounds: Bounds

    /// The bounds this framer enforces.
    public var limits: XMLLimits {
        XMLLimits(
            maxElementBytes: Int(bounds.elementBytes), maxBufferedBytes: Int(bounds.bufferedBytes),
            maxDepth: Int(bounds.depth), maxAttributesPerElement: Int(bounds.attributes),
            maxHeaderNamespaces: Int(bounds.headerNamespaces))
    }

    /// Largest stream header or depth-1 element accepted, in bytes.
    public var maxElementBytes: Int { Int(bounds.elementBytes) }

    private var buffer: [UInt8] = []
    private var cursor = Cursor()
    private var failure: XMPPStreamError?

    /// - Parameter limits: the bounds to enforce (default `XMLLimits.default`); every value positive.
    public init(limits: XMLLimits = .default) {
        precondition(
            limits.maxElementBytes > 0 && limits.maxBufferedBytes > 0 && limits.maxDepth > 0
                && limits.maxAttributesPerElement > 0, "XMLLimits values must be positive")
        self.bounds = Bounds(limits)
    }

    /// - Parameter maxElementBytes: the largest header or depth-1 element accepted, in bytes; the
    ///   other limits keep their defaults (the buffer limit grows to at least `maxElementBytes`).
    public init(maxElementBytes: Int) {
        self.init(limits: XMLLimits(maxElementBytes: maxElementBytes))
    }

    /// Bytes received but not yet returned as (or skipped as part of) a unit.
    public var bufferedByteCount: Int {
        buffer.count - cursor.unitStart
    }

    /// Capacity of the internal buffer, in bytes; 0 when its storage has been released.
    var bufferCapacity: Int {
        buffer.capacity
    }

    /// Adds received bytes. Cheap: bytes are copied once; scanning happens in `next()`.
    /// More than `limits.maxBufferedBytes` unreturned bytes fail the framer (`xml-limit-buffer`,
    /// thrown by the next `next()`); the bytes are then dropped.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty, failure == nil else { return }
        guard bufferedByteCount + bytes.count <= Int(bounds.bufferedBytes) else {
            failure = .bufferLimit(Int(bounds.bufferedBytes))
            buffer = []
            cursor = Cursor()
            return
        }
        if cursor.unitStart > 0 {
            compact(reserving: bytes.count)
        }
        buffer.append(contentsOf: bytes)
    }

    /// Adds received bytes; see `append(_:)`.
    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// The next complete unit, or `nil` when more bytes are needed.
    ///
    /// - Throws: `XMPPStreamError` when the bytes break the framing rules (see the type's
    ///   documentation); the framer then stays failed until `restart()`.
    public mutating func next() throws(XMPPStreamError) -> FramedUnit? {
        try next { unit in
            switch unit {
            case .streamOpen(let bytes): .streamOpen(Array(bytes))
            case .element(let bytes): .element(Array(bytes))
            case .streamClose: .streamClose
            }
        }
    }

    /// The next complete unit handed to `body` with its bytes lent from the framer's buffer (valid only
    /// inside `body`, which must not touch the framer), so a unit is parsed without being copied
    /// first; `nil`, without calling `body`, when more bytes are needed.
    ///
    /// - Throws: `XMPPStreamError` when the bytes break the framing rules (see `next()`), or what
    ///   `body` throws (the unit is consumed either way).
    public mutating func next<Result>(
        _ body: (LentUnit) throws(XMPPStreamError) -> Result
    ) throws(XMPPStreamError) -> Result? {
        if let failure {
            throw failure
        }
        guard cursor.scanIndex < buffer.count else {
            releaseIfConsumed()
            return nil
        }
        let bounds = self.bounds
        var cursor = self.cursor
        let result = buffer.withUnsafeBufferPointer { bytes in
            Self.scan(bytes, cursor: &cursor, bounds: bounds)
        }
        self.cursor = cursor
        let unit: Result?
        do throws(XMPPStreamError) {
            switch result {
            case .needMoreBytes:
                unit = nil
            case .streamOpen(let range):
                unit = try lend(range) { bytes throws(XMPPStreamError) in try body(.streamOpen(bytes)) }
            case .element(let range):
                unit = try lend(range) { bytes throws(XMPPStreamError) in try body(.element(bytes)) }
            case .streamClose:
                unit = try body(.streamClose)
            case .failure(let error):
                failure = error
                buffer = []
                self.cursor = Cursor()
                throw error
            }
        } catch {
            releaseIfConsumed()
            throw error
        }
        releaseIfConsumed()
        return unit
    }

    /// `body` over the buffer's bytes in `range` (`withUnsafeBytes` only rethrows untyped errors).
    private func lend<Result>(
        _ range: Range<Int>, _ body: (UnsafeRawBufferPointer) throws(XMPPStreamError) -> Result
    ) throws(XMPPStreamError) -> Result {
        let outcome = buffer.withUnsafeBytes { bytes in
            Swift.Result { () throws(XMPPStreamError) in try body(UnsafeRawBufferPointer(rebasing: bytes[range])) }
        }
        return try outcome.get()
    }

    /// A unit as `next(_:)` lends it: the bytes are the framer's, valid only inside the call.
    public enum LentUnit {
        /// The stream header's start tag (see `FramedUnit.streamOpen`).
        case streamOpen(UnsafeRawBufferPointer)
        /// One complete depth-1 element (see `FramedUnit.element`).
        case element(UnsafeRawBufferPointer)
        /// The stream's end tag.
        case streamClose
    }

    /// Prepares for a new stream on the same connection (after STARTTLS `<proceed/>` or SASL
    /// `<success/>`): the next unit must be a stream header. Buffered bytes are discarded, since
    /// nothing may legitimately follow those elements before the restart (after `<proceed/>` such
    /// bytes would be plaintext injected ahead of TLS). Also clears a failure.
    ///
    /// - Returns: the number of buffered bytes that were discarded (normally 0).
    @discardableResult
    public mutating func restart() -> Int {
        let discarded = failure == nil ? bufferedByteCount : 0
        buffer = []
        cursor = Cursor()
        failure = nil
        return discarded
    }

    // MARK: - Buffer management

    private mutating func releaseIfConsumed() {
        if cursor.unitStart == buffer.count {
            buffer = []
            cursor.unitStart = 0
            cursor.scanIndex = 0
        }
    }

    /// Drops consumed bytes, moving the incomplete unit to the front of a right-sized buffer.
    private mutating func compact(reserving extra: Int) {
        let start = cursor.unitStart
        var fresh: [UInt8] = []
        fresh.reserveCapacity(buffer.count - start + extra)
        fresh.append(contentsOf: buffer[start...])
        buffer = fresh
        cursor.scanIndex -= start
        cursor.unitStart = 0
    }
}
