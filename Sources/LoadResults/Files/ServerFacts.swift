/// What the server under test said about itself during a run, recorded in `manifest.json` so two
/// runs can be compared honestly months later (issue 14).
///
/// Every field is optional: a run fills what it learned (one session asks XEP-0092
/// `jabber:iq:version` and XEP-0030 disco#info once per run; the login records the stream features
/// offered, the SASL mechanism and the TLS version and cipher it actually used). A fact that was not
/// asked, not answered or not applicable (no TLS) stays nil and is not encoded. Keys are snake_case.
public struct ServerFacts: Codable, Sendable, Equatable {
    /// XEP-0092 `<name/>`, e.g. "Prosody".
    public var softwareName: String?
    /// XEP-0092 `<version/>`, e.g. "0.12.4".
    public var softwareVersion: String?
    /// XEP-0092 `<os/>`, when the server reveals it.
    public var operatingSystem: String?
    /// XEP-0030 disco#info identities of the server's domain.
    public var identities: [Identity]?
    /// XEP-0030 disco#info `<feature var=…/>` values, sorted.
    public var features: [String]?
    /// The stream features offered (after TLS and after SASL: each element's name and namespace).
    public var streamFeatures: [StreamFeature]?
    /// The SASL mechanism the login used, e.g. "SCRAM-SHA-1", "SCRAM-SHA-256-PLUS", "HT-SHA-256-EXPR".
    public var saslMechanism: String?
    /// The channel binding that mechanism was bound to (`tls-exporter`, `tls-server-end-point`); nil
    /// when none.
    public var saslChannelBinding: String?
    /// The path the probing session's first login took (`classic`, `sasl2`, `sasl2-bind2`, `fast`).
    public var loginPath: String?
    /// The TLS protocol version negotiated, e.g. "TLSv1.3" (nil: no TLS).
    public var tlsVersion: String?
    /// The TLS cipher suite negotiated, e.g. "TLS_AES_128_GCM_SHA256" (nil: no TLS).
    public var tlsCipher: String?

    /// One disco#info `<identity category=… type=… name=…/>`.
    public struct Identity: Codable, Sendable, Equatable, Hashable {
        public var category: String
        public var type: String
        public var name: String?
        public init(category: String, type: String, name: String? = nil) {
            self.category = category
            self.type = type
            self.name = name
        }
    }

    /// One child of `<stream:features/>`: its element name and namespace.
    public struct StreamFeature: Codable, Sendable, Equatable, Hashable {
        public var name: String
        public var namespace: String
        public init(name: String, namespace: String) {
            self.name = name
            self.namespace = namespace
        }
    }

    enum CodingKeys: String, CodingKey {
        case softwareName = "software_name"
        case softwareVersion = "software_version"
        case operatingSystem = "os"
        case identities, features
        case streamFeatures = "stream_features"
        case saslMechanism = "sasl_mechanism"
        case saslChannelBinding = "sasl_channel_binding"
        case loginPath = "login_path"
        case tlsVersion = "tls_version"
        case tlsCipher = "tls_cipher"
    }

    public init(
        softwareName: String? = nil, softwareVersion: String? = nil, operatingSystem: String? = nil,
        identities: [Identity]? = nil, features: [String]? = nil, streamFeatures: [StreamFeature]? = nil,
        saslMechanism: String? = nil, tlsVersion: String? = nil, tlsCipher: String? = nil,
        saslChannelBinding: String? = nil, loginPath: String? = nil
    ) {
        self.saslChannelBinding = saslChannelBinding
        self.loginPath = loginPath
        self.softwareName = softwareName
        self.softwareVersion = softwareVersion
        self.operatingSystem = operatingSystem
        self.identities = identities
        self.features = features
        self.streamFeatures = streamFeatures
        self.saslMechanism = saslMechanism
        self.tlsVersion = tlsVersion
        self.tlsCipher = tlsCipher
    }

    /// True when nothing was learned.
    public var isEmpty: Bool { self == ServerFacts() }

    /// "Prosody 0.12.4" (or whichever part is known; nil when neither is).
    public var softwareDescription: String? {
        let parts = [softwareName, softwareVersion].compactMap { $0 }
        return parts.isEmpty ? nil : parts.joined(separator: " ")
    }
}
