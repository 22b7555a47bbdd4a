/// Why our side of a SASL exchange refused the server's data.
///
/// A struct wrapping a private enum (it may grow). `kind` is the typed error name counted in results.
public struct SASLError: Error, Sendable, Hashable, CustomStringConvertible {
    private enum Reason: Hashable, Sendable {
        case malformed(String)
        case nonceMismatch
        case iterationCount(String, limit: Int)
        case serverSignatureMismatch
        case serverError(String)
        case unsupportedExtension(String)
        case crypto(String)
        case downgradeDetected(String)
    }

    private let reason: Reason
    private init(_ reason: Reason) { self.reason = reason }

    static func malformed(_ what: String) -> SASLError { SASLError(.malformed(what)) }
    static let nonceMismatch = SASLError(.nonceMismatch)
    static func iterationCount(_ value: String, limit: Int) -> SASLError { SASLError(.iterationCount(value, limit: limit)) }
    static let serverSignatureMismatch = SASLError(.serverSignatureMismatch)
    static func serverError(_ value: String) -> SASLError { SASLError(.serverError(value)) }
    static func unsupportedExtension(_ value: String) -> SASLError { SASLError(.unsupportedExtension(value)) }
    public static func crypto(_ what: String) -> SASLError { SASLError(.crypto(what)) }
    /// XEP-0474 or XEP-0440's rules caught a removed mechanism or channel-binding type.
    static func downgradeDetected(_ what: String) -> SASLError { SASLError(.downgradeDetected(what)) }

    public var kind: String {
        switch reason {
        case .malformed: return "sasl-malformed"
        case .nonceMismatch: return "sasl-nonce"
        case .iterationCount: return "sasl-iteration-count"
        case .serverSignatureMismatch: return "sasl-server-signature"
        case .serverError: return "sasl-server-error"
        case .unsupportedExtension: return "sasl-malformed"
        case .crypto: return "sasl-crypto"
        case .downgradeDetected: return "sasl-downgrade"
        }
    }

    public var description: String {
        switch reason {
        case .malformed(let what): return "malformed SCRAM message: \(what)"
        case .nonceMismatch: return "the server nonce does not start with our client nonce"
        case .iterationCount(let value, let limit):
            return "unacceptable SCRAM iteration count '\(value)' (accepted: 1 to \(limit), LoginMachine.Configuration.maxSCRAMIterations)"
        case .serverSignatureMismatch: return "the server signature does not verify: the server does not know the password"
        case .serverError(let value): return "the server reported SCRAM error '\(value)'"
        case .unsupportedExtension(let value): return "mandatory SCRAM extension '\(value)' is not supported"
        case .crypto(let what): return "libcrypto failed: \(what)"
        case .downgradeDetected(let what): return "downgrade detected: \(what)"
        }
    }
}
