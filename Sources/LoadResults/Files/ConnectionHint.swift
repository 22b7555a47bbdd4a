import Foundation

/// What to do about the connection errors that mean the *generator* ran out of something, said once
/// per kind in `summary.json` (`hints`), the text report and the console: out of ephemeral ports
/// (`addr-not-available`, EADDRNOTAVAIL / EADDRINUSE) and out of file descriptors (`fd-exhausted`,
/// EMFILE / ENFILE). The error kinds stay typed and counted in `errors`; a hint only adds the remedy.
public enum ConnectionHint {
    /// The error kinds with a hint (`ConnectionFailure.kind` in SessionCore).
    public static let addressNotAvailable = "addr-not-available"
    public static let descriptorsExhausted = "fd-exhausted"

    /// The process's file-descriptor limits: the soft limit xmppload raised itself to, and the hard one.
    public struct DescriptorLimits: Sendable, Equatable {
        public var soft: Int
        public var hard: Int

        public init(soft: Int, hard: Int) {
            self.soft = soft
            self.hard = hard
        }

        /// This process's limits now (nil if they cannot be read).
        public static func current() -> DescriptorLimits? {
            var limit = rlimit()
            guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
            return DescriptorLimits(soft: Int(clamping: limit.rlim_cur), hard: Int(clamping: limit.rlim_max))
        }
    }

    /// One line per kind that occurred in `errors` (in a fixed order), with its count and remedy;
    /// empty when none did.
    public static func hints(errors: [String: UInt64], limits: DescriptorLimits?) -> [String] {
        var hints: [String] = []
        if let count = errors[addressNotAvailable], count > 0 {
            hints.append(
                "\(addressNotAvailable) (\(count)): this host ran out of ephemeral ports (about 28,000 per source address towards one server address and port). Bind connections to more local addresses, e.g. --source 127.0.0.2-127.0.0.9 on loopback or several of the host's own addresses, or run more generators (--segment i/N)."
            )
        }
        if let count = errors[descriptorsExhausted], count > 0 {
            let limitText =
                limits.map { limits in
                    limits.soft < limits.hard
                        ? "xmppload's limit is \(limits.soft) descriptors, below the hard limit of \(limits.hard)"
                        : "xmppload raised its limit to the hard limit, \(limits.hard) descriptors"
                } ?? "the descriptor limit could not be read"
            hints.append(
                "\(descriptorsExhausted) (\(count)): out of file descriptors (one per session, plus about 100 for the process); \(limitText). Raise the hard limit (ulimit -Hn; LimitNOFILE= for a systemd unit; nofile in /etc/security/limits.conf; fs.file-max for ENFILE) or spread the sessions over more generators (--segment i/N)."
            )
        }
        return hints
    }
}
