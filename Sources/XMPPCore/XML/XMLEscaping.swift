/// Escaping of character data and attribute values for the XML writer.
///
/// Text escapes `&`, `<`, `>` and CR (as `&#13;`, which XML parsers would otherwise normalize away).
/// Attribute values (always written in single quotes) additionally escape `"`, `'`, TAB, LF (which
/// attribute-value normalization would turn into spaces). Characters that XML 1.0 cannot carry at all
/// (C0 controls other than TAB/LF/CR, U+FFFE, U+FFFF) are replaced by U+FFFD so the output always
/// parses.
enum XMLEscaping {
    /// Appends `string` escaped as character data.
    static func appendText(_ string: String, to out: inout [UInt8]) {
        append(string, to: &out, attribute: false)
    }

    /// Appends `string` escaped for use inside a single- or double-quoted attribute value.
    static func appendAttributeValue(_ string: String, to out: inout [UInt8]) {
        append(string, to: &out, attribute: true)
    }

    /// Appends a string that needs no escaping (names, fixed markup).
    static func appendRaw(_ string: String, to out: inout [UInt8]) {
        out.append(contentsOf: string.utf8)
    }

    /// Appends `value` in decimal, as `String(value)` would write it, without making the string.
    static func appendDecimal(_ value: some FixedWidthInteger, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var rest = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // up to 24 digits, least significant first
        var count = 0
        withUnsafeMutableBytes(of: &digits) { scratch in
            repeat {
                scratch[count] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
                count += 1
            } while rest != 0
            for index in stride(from: count - 1, through: 0, by: -1) { out.append(scratch[index]) }
        }
    }

    /// Appends ` name='value'`: `name` as is, `value` escaped.
    static func appendAttribute(_ name: String, _ value: String, to out: inout [UInt8]) {
        appendAttribute(name, to: &out) { appendAttributeValue(value, to: &$0) }
    }

    /// Appends ` name='value'` for a number.
    static func appendAttribute(_ name: String, _ value: some FixedWidthInteger, to out: inout [UInt8]) {
        appendAttribute(name, to: &out) { appendDecimal(value, to: &$0) }
    }

    /// Appends ` name='`, what `value` writes, then `'`.
    private static func appendAttribute(_ name: String, to out: inout [UInt8], value: (inout [UInt8]) -> Void) {
        out.append(UInt8(ascii: " "))
        appendRaw(name, to: &out)
        out.append(UInt8(ascii: "="))
        out.append(UInt8(ascii: "'"))
        value(&out)
        out.append(UInt8(ascii: "'"))
    }

    private static let replacementCharacter: [UInt8] = [0xEF, 0xBF, 0xBD]
    private static let amp = Array("&amp;".utf8)
    private static let lt = Array("&lt;".utf8)
    private static let gt = Array("&gt;".utf8)
    private static let cr = Array("&#13;".utf8)
    private static let quot = Array("&quot;".utf8)
    private static let apos = Array("&apos;".utf8)
    private static let lf = Array("&#10;".utf8)
    private static let tab = Array("&#9;".utf8)

    private static func append(_ string: String, to out: inout [UInt8], attribute: Bool) {
        var string = string
        string.withUTF8 { bytes in
            var runStart = 0
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                let replacement: [UInt8]?
                var width = 1
                switch byte {
                case UInt8(ascii: "&"): replacement = amp
                case UInt8(ascii: "<"): replacement = lt
                case UInt8(ascii: ">"): replacement = gt
                case UInt8(ascii: "\r"): replacement = cr
                case UInt8(ascii: "\""): replacement = attribute ? quot : nil
                case UInt8(ascii: "'"): replacement = attribute ? apos : nil
                case UInt8(ascii: "\n"): replacement = attribute ? lf : nil
                case UInt8(ascii: "\t"): replacement = attribute ? tab : nil
                case 0x00..<0x20: replacement = replacementCharacter
                case 0xEF
                where index + 2 < bytes.count && bytes[index + 1] == 0xBF
                    && (bytes[index + 2] == 0xBE || bytes[index + 2] == 0xBF):
                    replacement = replacementCharacter
                    width = 3
                default: replacement = nil
                }
                if let replacement {
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                    out.append(contentsOf: replacement)
                    index += width
                    runStart = index
                } else {
                    index += 1
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count]))
        }
    }
}
