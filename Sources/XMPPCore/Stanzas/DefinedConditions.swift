/// The error conditions RFC 6120 defines, per namespace: the only condition names that may become
/// part of an error kind (a metric label), so a server cannot grow the set of labels without bound.
///
/// A condition element outside these sets is reported as `undefined-condition`, as RFC 6120 §8.3.2
/// tells a recipient to treat an unknown condition.
enum DefinedConditions {
    /// RFC 6120 §8.3.3 (`urn:ietf:params:xml:ns:xmpp-stanzas`).
    static let stanza: Set<String> = [
        "bad-request", "conflict", "feature-not-implemented", "forbidden", "gone", "internal-server-error",
        "item-not-found", "jid-malformed", "not-acceptable", "not-allowed", "not-authorized", "policy-violation",
        "recipient-unavailable", "redirect", "registration-required", "remote-server-not-found",
        "remote-server-timeout", "resource-constraint", "service-unavailable", "subscription-required",
        "undefined-condition", "unexpected-request",
    ]
    /// RFC 6120 §4.9.3 (`urn:ietf:params:xml:ns:xmpp-streams`).
    static let stream: Set<String> = [
        "bad-format", "bad-namespace-prefix", "conflict", "connection-timeout", "host-gone", "host-unknown",
        "improper-addressing", "internal-server-error", "invalid-from", "invalid-namespace", "invalid-xml",
        "not-authorized", "not-well-formed", "policy-violation", "remote-connection-failed", "reset",
        "resource-constraint", "restricted-xml", "see-other-host", "system-shutdown", "undefined-condition",
        "unsupported-encoding", "unsupported-feature", "unsupported-stanza-type", "unsupported-version",
    ]
    /// RFC 6120 §6.5 (`urn:ietf:params:xml:ns:xmpp-sasl`).
    static let sasl: Set<String> = [
        "aborted", "account-disabled", "credentials-expired", "encryption-required", "incorrect-encoding",
        "invalid-authzid", "invalid-mechanism", "malformed-request", "mechanism-too-weak", "not-authorized",
        "temporary-auth-failure",
    ]

    /// The defined conditions of `namespace`, or nil for a namespace without a fixed set.
    static func conditions(in namespace: String) -> Set<String>? {
        switch namespace {
        case XMPPNamespace.stanzas: stanza
        case XMPPNamespace.streamErrors: stream
        case XMPPNamespace.sasl: sasl
        default: nil
        }
    }
}
