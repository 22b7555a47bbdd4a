import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The secret every control-port request must carry (`Authorization: Bearer TOKEN`).
///
/// A run makes a fresh one (`generate`: 32 bytes from the system's cryptographic generator —
/// getrandom(2) on Linux — as 64 hex digits) and writes it to `<results>/control-token`, readable
/// by the user only (0600), or takes the user's (`--control-token-file`, first line, at least
/// `minimumLength` printable characters without spaces). The token itself is never printed, logged
/// or recorded; only the file's path is.
public struct ControlToken: Sendable, Equatable {
    /// The token's text (what follows `Bearer `).
    public let text: String

    /// The file a run writes its generated token to, in its results directory.
    public static let fileName = "control-token"
    /// The shortest token accepted from a file, in characters.
    public static let minimumLength = 16
    /// The longest, in characters (a header line stays small).
    public static let maximumLength = 1024

    /// `text` as given; nil when it is too short, too long, or holds spaces or control characters.
    public init?(_ text: String) {
        guard (Self.minimumLength...Self.maximumLength).contains(text.utf8.count),
            text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else { return nil }
        self.text = text
    }

    /// A fresh token: 32 random bytes (256 bits) from `SystemRandomNumberGenerator`, as hex.
    public static func generate() -> ControlToken {
        var generator = SystemRandomNumberGenerator()
        var text = ""
        for _ in 0..<4 {
            let word = generator.next() as UInt64
            text += String(repeating: "0", count: word.leadingZeroBitCount / 4) + (word == 0 ? "" : String(word, radix: 16))
        }
        return ControlToken(text)!
    }

    /// True when `presented` is this token; the time taken depends only on the lengths, never on
    /// where the two first differ.
    public func matches(_ presented: String) -> Bool {
        let expected = Array(text.utf8)
        let given = Array(presented.utf8)
        var difference = UInt8(truncatingIfNeeded: expected.count ^ given.count) | (expected.count == given.count ? 0 : 1)
        for index in expected.indices {
            difference |= expected[index] ^ (given.isEmpty ? 0 : given[index % given.count])
        }
        return difference == 0
    }

    // MARK: - Files

    /// Why a token file cannot be used (said without the token).
    public struct FileProblem: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// The token in the first line of `path` (spaces around it trimmed).
    public static func read(from path: String) throws(FileProblem) -> ControlToken {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw FileProblem(description: "cannot read the control token file '\(path)'")
        }
        let firstLine =
            String(decoding: data.prefix(maximumLength + 2), as: UTF8.self)
            .split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        guard let token = ControlToken(firstLine.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw FileProblem(
                description:
                    "the control token file '\(path)' must hold one token of \(minimumLength) to \(maximumLength) printable characters without spaces on its first line (e.g. `openssl rand -hex 32 > \(path)`)"
            )
        }
        return token
    }

    /// True when `path` can be read by its group or by others (a token there is not the user's alone).
    public static func isReadableByOthers(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        return info.st_mode & (S_IRGRP | S_IROTH) != 0
    }

    /// Writes the token to `path`, readable and writable by the user only (0600), replacing a file
    /// left there (a run before it with `--overwrite`); never follows a symbolic link.
    public func write(to path: String) throws(FileProblem) {
        unlink(path)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw FileProblem(description: "cannot write the control token file '\(path)': \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        // The mode asked at creation is narrowed by the umask only; fchmod makes it exactly 0600.
        _ = fchmod(descriptor, 0o600)
        let bytes = Array((text + "\n").utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count else {
            throw FileProblem(description: "cannot write the control token file '\(path)': \(String(cString: strerror(errno)))")
        }
    }

    // MARK: - Where the port listens

    /// True for an address on this host only: 127.0.0.0/8, ::1 and `localhost`. Anything else
    /// (0.0.0.0, ::, another interface's address or a name) can be reached from elsewhere.
    public static func isLoopback(host: String) -> Bool {
        var text = host.lowercased()
        if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        if text == "localhost" || text == "::1" || text == "0:0:0:0:0:0:0:1" { return true }
        var address = in_addr()
        guard inet_pton(AF_INET, text, &address) == 1 else {
            var address6 = in6_addr()
            guard inet_pton(AF_INET6, text, &address6) == 1 else { return false }
            // ::ffff:127.x.y.z, an IPv4 loopback address written as IPv6.
            let bytes = withUnsafeBytes(of: address6) { Array($0) }
            return bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF && bytes[12] == 127
        }
        return UInt32(bigEndian: address.s_addr) >> 24 == 127
    }
}
