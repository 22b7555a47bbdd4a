/// RFC 4648 base64 (the standard alphabet, padded), byte by byte: what SASL payloads, SCRAM nonces,
/// salts and proofs and XEP-0115 hashes are written in. One allocation per call (the result), where
/// Foundation's `Data` round trips cost five to seven per payload.
///
/// Decoding is strict, as `Data(base64Encoded:)` is: the length must be a multiple of 4, `=` may
/// only end the text (at most two) and characters outside the alphabet fail. Bits a padded group
/// leaves unused are ignored, as most decoders do (RFC 4648 §3.5 lets a decoder refuse them; a
/// load tool should not fail a login a server's own clients accept).
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// The 6-bit value of each byte of the alphabet; 0xFF for any other byte.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        return table
    }()

    /// `bytes` in base64, as ASCII bytes appended to `out`.
    static func encode(_ bytes: some Collection<UInt8>, into out: inout [UInt8]) {
        out.reserveCapacity(out.count + encodedCount(bytes.count))
        forEachCharacter(of: bytes) { out.append($0) }
    }

    /// `bytes` in base64.
    static func encode(_ bytes: some Collection<UInt8>) -> String {
        String(unsafeUninitializedCapacity: encodedCount(bytes.count)) { buffer in
            var written = 0
            forEachCharacter(of: bytes) {
                buffer[written] = $0
                written += 1
            }
            return written
        }
    }

    /// Calls `emit` with each character of `bytes` in base64, in order.
    private static func forEachCharacter(of bytes: some Collection<UInt8>, _ emit: (UInt8) -> Void) {
        var iterator = bytes.makeIterator()
        while let first = iterator.next() {
            let second = iterator.next()
            let third = second == nil ? nil : iterator.next()
            let group = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
            emit(alphabet[Int(group >> 18 & 0x3F)])
            emit(alphabet[Int(group >> 12 & 0x3F)])
            emit(second == nil ? UInt8(ascii: "=") : alphabet[Int(group >> 6 & 0x3F)])
            emit(third == nil ? UInt8(ascii: "=") : alphabet[Int(group & 0x3F)])
        }
    }

    static func encodedCount(_ count: Int) -> Int { (count + 2) / 3 * 4 }

    /// Space, tab, CR or LF: what `decode(_:skippingWhitespace:)` skips.
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    /// The bytes `text` encodes, or nil when it is not strict base64. With `skippingWhitespace`,
    /// spaces, tabs, CR and LF anywhere are ignored first (SASL payloads may be wrapped).
    static func decode(_ text: some Collection<UInt8>, skippingWhitespace: Bool = false) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(text.count / 4 * 3)
        var group: UInt32 = 0
        var inGroup = 0
        var padding = 0
        for byte in text {
            if skippingWhitespace, isWhitespace(byte) { continue }
            if byte == UInt8(ascii: "=") {
                // Padding only in the last two places of a group.
                guard inGroup >= 2 else { return nil }
                padding += 1
                group <<= 6
                inGroup += 1
            } else {
                let value = values[Int(byte)]
                guard value != 0xFF, padding == 0 else { return nil }
                group = group << 6 | UInt32(value)
                inGroup += 1
            }
            if inGroup == 4 {
                out.append(UInt8(truncatingIfNeeded: group >> 16))
                if padding < 2 { out.append(UInt8(truncatingIfNeeded: group >> 8)) }
                if padding < 1 { out.append(UInt8(truncatingIfNeeded: group)) }
                group = 0
                inGroup = 0
                if padding > 0 { padding = 3 }  // nothing may follow a padded group
            }
        }
        guard inGroup == 0 else { return nil }
        return out
    }
}
