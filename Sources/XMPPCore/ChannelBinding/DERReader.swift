/// One DER tag-length-value (definite lengths up to 4 bytes), as slices of the input. Read here for
/// `tls-server-end-point`'s signature hash and by the engine's TLS set-up for a self-issued certificate.
package struct DERReader {
    package let tag: UInt8
    package let content: ArraySlice<UInt8>
    /// The bytes after this element.
    package let rest: ArraySlice<UInt8>

    package static func first(in bytes: ArraySlice<UInt8>) -> DERReader? {
        var index = bytes.startIndex
        guard bytes.count >= 2 else { return nil }
        let tag = bytes[index]
        index += 1
        var length = Int(bytes[index])
        index += 1
        if length & 0x80 != 0 {
            let count = length & 0x7F
            guard (1...4).contains(count), bytes.endIndex - index >= count else { return nil }
            length = 0
            for _ in 0..<count {
                length = length << 8 | Int(bytes[index])
                index += 1
            }
        }
        guard length >= 0, bytes.endIndex - index >= length else { return nil }
        return DERReader(tag: tag, content: bytes[index..<index + length], rest: bytes[(index + length)...])
    }
}
