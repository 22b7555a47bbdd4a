import Foundation
import Testing

/// `run`'s limit flags (`HardeningOptions`) and the SASLprep check of the credentials, as a user
/// meets them: bad values are usage errors (exit 2), every problem listed at once, before any
/// connection (the --server port is never listened on).
@Suite struct HardeningFlagsTests {
    static let base = [
        "run", "profiles/login.yaml", "--server", "127.0.0.1:9", "--domain", "load.test", "--accounts", "1-2",
        "--sessions", "2", "--duration", "1s", "--tls", "none", "--plain",
    ]

    @Test(.timeLimit(.minutes(1)))
    func everyBadValueIsListedAtOnce() throws {
        let result = try CommandLineTests.xmppload(
            Self.base + [
                "--password", "ok",
                "--max-element-size", "9e12", "--max-buffered", "300MiB", "--max-depth", "1",
                "--max-attributes", "0", "--max-header-namespaces", "1000000", "--max-scram-iterations", "0",
                "--metrics-port", "99999",
            ], timeout: 60)
        #expect(result.status == 2, "\(result.output)")
        for expected in [
            "--max-element-size must be a size such as 262144, 256KiB or 1MiB (64 B to 64 MiB), got '9e12'",
            "--max-buffered must be 64 B to 256 MiB, got '300MiB'",
            "--max-depth must be 2 to 10000, got 1",
            "--max-attributes must be 8 to 10000, got 0",
            "--max-header-namespaces must be 2 to 10000, got 1000000",
            "--max-scram-iterations must be 1 to 10000000, got 0",
            "--metrics-port must be 1 to 65535, got 99999",
        ] {
            #expect(result.output.contains(expected), "missing '\(expected)' in:\n\(result.output)")
        }
    }

    @Test(
        .timeLimit(.minutes(1)),
        arguments: [
            (["--max-element-size", "2MiB", "--max-buffered", "1MiB"], "--max-buffered (1MiB) must be at least --max-element-size (2MiB)"),
            (["--max-element-size", "65MiB"], "--max-element-size must be 64 B to 64 MiB, got '65MiB'"),
            (["--max-element-size", "12 GB"], "--max-element-size must be a size such as"),
            (["--max-scram-iterations", "10000001"], "--max-scram-iterations must be 1 to 10000000, got 10000001"),
            (["--interval", "0s"], "--interval must be at least 100ms, got '0s'"),
        ])
    func rangesAreChecked(_ flags: [String], _ expected: String) throws {
        let result = try CommandLineTests.xmppload(Self.base + ["--password", "ok"] + flags, timeout: 60)
        #expect(result.status == 2, "\(result.output)")
        #expect(result.output.contains(expected), "\(result.output)")
    }

    /// A password SASLprep (RFC 4013) refuses would fail every login: refused up front, and not echoed.
    @Test(.timeLimit(.minutes(1)))
    func anUnpreparablePasswordIsAUsageErrorThatDoesNotShowIt() throws {
        let result = try CommandLineTests.xmppload(
            Self.base + ["--password", "s3cr\u{0007}t\u{E000}", "--account-prefix", "\u{0627}a"], timeout: 60)
        #expect(result.status == 2, "\(result.output)")
        #expect(result.output.contains("the password contains a control character (RFC 3454 C.2) and cannot be prepared with SASLprep (RFC 4013)"))
        #expect(result.output.contains("the password contains a private-use character (RFC 3454 C.3)"))
        #expect(result.output.contains("--account-prefix mixes right-to-left and left-to-right characters"))
        #expect(!result.output.contains("s3cr"), "the password was printed")
    }

    @Test(.timeLimit(.minutes(1)))
    func theHelpListsTheLimits() throws {
        let result = try CommandLineTests.xmppload(["run", "--help"], timeout: 60)
        #expect(result.status == 0)
        for flag in ["--max-element-size", "--max-buffered", "--max-depth", "--max-attributes", "--max-header-namespaces", "--max-scram-iterations"] {
            #expect(result.output.contains(flag), "\(flag) missing from run --help")
        }
    }
}
