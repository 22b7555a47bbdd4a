// A virtual user's XEP-0388 user-agent id: a UUID derived from the run's seed and the session's serial.
import LoadProfile

/// The `<user-agent id=…/>` of one virtual user (XEP-0388): a version-4-shaped UUID, lowercase,
/// drawn from the run's seed and the session's serial — the same for every connection of the
/// session (servers key FAST tokens and Bind2's resources on it), different between sessions, the
/// same again in a run with the same seed. Nothing is stored: it is derived when a login needs it.
enum UserAgentID {
    /// The id of session `serial` in a run seeded `seed`.
    static func derive(seed: UInt64, serial: Int) -> String {
        var generator = SeededGenerator(seed: seed ^ 0x5A52_2A6E_7000_0000, stream: UInt64(UInt32(truncatingIfNeeded: serial)))
        let words = (generator.next(), generator.next())
        // One allocation, the string's own (a login makes one of these when it may use SASL2).
        return String(unsafeUninitializedCapacity: 36) { text in
            var position = 0
            for index in 0..<16 {
                let word = index < 8 ? words.0 : words.1
                var byte = UInt8(truncatingIfNeeded: word >> UInt64(56 - 8 * (index % 8)))
                if index == 6 { byte = byte & 0x0F | 0x40 }  // version 4
                if index == 8 { byte = byte & 0x3F | 0x80 }  // RFC 4122 variant
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    text[position] = UInt8(ascii: "-")
                    position += 1
                }
                text[position] = hexDigit(byte >> 4)
                text[position + 1] = hexDigit(byte & 0x0F)
                position += 2
            }
            return position
        }
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10 }
}
