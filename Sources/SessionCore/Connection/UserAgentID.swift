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
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        for word in [generator.next(), generator.next()] {
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
        }
        bytes[6] = bytes[6] & 0x0F | 0x40  // version 4
        bytes[8] = bytes[8] & 0x3F | 0x80  // RFC 4122 variant
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
