// Checks `run`'s limits on what one session accepts from the server (docs/HARDENING.md) as written
// on the command line, and turns them into `XMLLimits` and the SCRAM iteration cap.
import Foundation
import XMPPCore

/// `run`'s `--max-element-size`, `--max-buffered`, `--max-depth`, `--max-attributes`,
/// `--max-header-namespaces` and `--max-scram-iterations` as plain values.
///
/// Contract: `resolve(problems:)` returns the limits to run with and appends one line per bad value
/// (naming the flag, the accepted range and the value given) to `problems`, so they are reported
/// with every other usage problem at once (exit 2). Sizes are bytes, written as a plain number or
/// with a binary suffix (`B`, `KiB`, `MiB`); counts are plain integers. Defaults are `XMLLimits.default`
/// and `SCRAMClient.defaultMaxIterations`; accepted ranges are the `…Range` constants below.
public struct SessionLimitOptions: Sendable, Equatable {
    public var maxElementSize = "256KiB"
    /// nil: max(512KiB, the element size).
    public var maxBuffered: String?
    public var maxDepth = XMLLimits.default.maxDepth
    public var maxAttributes = XMLLimits.default.maxAttributesPerElement
    public var maxHeaderNamespaces = XMLLimits.default.maxHeaderNamespaces
    public var maxScramIterations = SCRAMClient.defaultMaxIterations

    public init() {}

    /// Accepted `--max-element-size`, in bytes (64 B to 64 MiB).
    public static let elementSizeRange = 64...(64 << 20)
    /// Accepted `--max-buffered`, in bytes (at least the element size; at most 256 MiB).
    public static let bufferedRange = 64...(256 << 20)
    public static let depthRange = 2...10_000
    public static let attributesRange = 8...10_000
    public static let headerNamespacesRange = 2...10_000
    public static let scramIterationsRange = 1...SCRAMClient.iterationCeiling

    /// The XML limits and the SCRAM iteration cap; every bad value appends a line to `problems`
    /// (the returned values are then the defaults for those flags and must not be used).
    public func resolve(problems: inout [String]) -> (xml: XMLLimits, maxSCRAMIterations: Int) {
        let defaults = XMLLimits.default
        let elementBytes = Self.size(maxElementSize, flag: "--max-element-size", range: Self.elementSizeRange, problems: &problems)
        var bufferedBytes: Int?
        if let maxBuffered {
            bufferedBytes = Self.size(maxBuffered, flag: "--max-buffered", range: Self.bufferedRange, problems: &problems)
            if let bufferedBytes, let elementBytes, bufferedBytes < elementBytes {
                problems.append("--max-buffered (\(maxBuffered)) must be at least --max-element-size (\(maxElementSize))")
            }
        }
        let depth = Self.count(maxDepth, flag: "--max-depth", range: Self.depthRange, problems: &problems)
        let attributes = Self.count(maxAttributes, flag: "--max-attributes", range: Self.attributesRange, problems: &problems)
        let namespaces = Self.count(
            maxHeaderNamespaces, flag: "--max-header-namespaces", range: Self.headerNamespacesRange, problems: &problems)
        let iterations = Self.count(
            maxScramIterations, flag: "--max-scram-iterations", range: Self.scramIterationsRange, problems: &problems)
        let limits = XMLLimits(
            maxElementBytes: elementBytes ?? defaults.maxElementBytes, maxBufferedBytes: bufferedBytes,
            maxDepth: depth ?? defaults.maxDepth, maxAttributesPerElement: attributes ?? defaults.maxAttributesPerElement,
            maxHeaderNamespaces: namespaces ?? defaults.maxHeaderNamespaces)
        return (limits, iterations ?? SCRAMClient.defaultMaxIterations)
    }

    /// `count` when inside `range`; otherwise a problem and nil.
    static func count(_ value: Int, flag: String, range: ClosedRange<Int>, problems: inout [String]) -> Int? {
        guard range.contains(value) else {
            problems.append("\(flag) must be \(range.lowerBound) to \(range.upperBound), got \(value)")
            return nil
        }
        return value
    }

    /// A byte size (`262144`, `256KiB`, `1MiB`, `512B`) inside `range`; otherwise a problem and nil.
    static func size(_ text: String, flag: String, range: ClosedRange<Int>, problems: inout [String]) -> Int? {
        let accepted = "\(describe(bytes: range.lowerBound)) to \(describe(bytes: range.upperBound))"
        guard let bytes = parseSize(text) else {
            problems.append("\(flag) must be a size such as 262144, 256KiB or 1MiB (\(accepted)), got '\(text)'")
            return nil
        }
        guard range.contains(bytes) else {
            problems.append("\(flag) must be \(accepted), got '\(text)'")
            return nil
        }
        return bytes
    }

    /// Bytes from a decimal number with an optional suffix `B`, `KiB` or `MiB` (case-insensitive;
    /// `K`/`M` also mean KiB/MiB); nil when malformed or beyond `Int`.
    public static func parseSize(_ text: String) -> Int? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let digits = trimmed.prefix(while: { $0.isASCII && $0.isNumber })
        guard !digits.isEmpty, let number = Int(digits) else { return nil }
        let multiplier: Int
        switch trimmed.dropFirst(digits.count).lowercased() {
        case "", "b": multiplier = 1
        case "k", "kib": multiplier = 1 << 10
        case "m", "mib": multiplier = 1 << 20
        default: return nil
        }
        let (bytes, overflow) = number.multipliedReportingOverflow(by: multiplier)
        return overflow ? nil : bytes
    }

    /// `65536` → `64 KiB`; sizes that are not whole KiB stay in bytes.
    public static func describe(bytes: Int) -> String {
        if bytes >= 1 << 20, bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes >= 1 << 10, bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return "\(bytes) B"
    }

    /// SASLprep (RFC 4013) problems of the password and the account name prefix, as usage problems
    /// (the password itself is never printed). Logins prepare both; an unpreparable one would fail
    /// every login, so it is refused before the run.
    public static func checkCredentials(password: String?, accountPrefix: String, problems: inout [String]) {
        if let password {
            do { _ = try SASLprep.prepare(password) } catch {
                problems += error.problems.map { "the password \($0) and cannot be prepared with SASLprep (RFC 4013)" }
            }
        }
        do { _ = try SASLprep.prepare(accountPrefix) } catch {
            problems += error.problems.map { "--account-prefix \($0) and cannot be prepared with SASLprep (RFC 4013)" }
        }
    }
}
