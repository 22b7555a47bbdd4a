// libFuzzer entry point for the stream framer + stanza parser (built by scripts/fuzz, not by
// `swift build`): the input is a server's byte stream, cut into chunks at the positions its first
// byte chooses, framed with `XMLStreamFramer` and parsed with `StanzaParser`, as the codec does.
// Any crash, sanitizer report or broken invariant (an element without a header, buffered bytes
// beyond the limit, an element that parses differently on the long-lived parser than on a fresh one,
// i.e. something one stanza left in the running push parser reached the next) is a finding. Compiled
// into the same module as Sources/XMPPCore.

private let parser = StanzaParser()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStream(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    guard let first = bytes.first else { return 0 }
    // Limits small enough that every limit path is reached by inputs of a few KiB (scripts/fuzz runs
    // with -max_len=4096: larger inputs only repeat these paths, at a fraction of the speed).
    let limits = XMLLimits(maxElementBytes: 1024, maxBufferedBytes: 2048, maxDepth: 16,
                           maxAttributesPerElement: 16, maxHeaderNamespaces: 4)
    var framer = XMLStreamFramer(limits: limits)
    let chunk = Int(first % 64) + 1
    var header: StreamHeader?
    var offset = 1
    while offset < size {
        let end = min(offset + chunk, size)
        framer.append(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[offset..<end]))
        offset = end
        do {
            while let unit = try framer.next() {
                switch unit {
                case .streamOpen(let opening):
                    header = try parser.parseHeader(opening)
                case .element(let element):
                    guard let header else { return 0 }
                    let shared = Result { () throws(XMPPStreamError) in try parser.parseElement(element, in: header) }
                    let fresh = Result { () throws(XMPPStreamError) in try StanzaParser().parseElement(element, in: header) }
                    switch (shared, fresh) {
                    case (.success(let a), .success(let b)): precondition(a == b, "parsed differently on a fresh parser")
                    case (.failure(let a), .failure(let b)): precondition(a.kind == b.kind, "failed differently on a fresh parser")
                    default: preconditionFailure("shared parser: \(shared), fresh parser: \(fresh)")
                    }
                    _ = try shared.get()
                case .streamClose:
                    header = nil
                }
            }
        } catch {
            return 0
        }
        precondition(framer.bufferedByteCount <= limits.maxBufferedBytes, "buffered beyond the limit")
    }
    return 0
}
