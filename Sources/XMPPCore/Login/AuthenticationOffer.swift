/// What one `<stream:features/>` offers for authentication: the RFC 6120 SASL mechanisms, the XEP-0440
/// channel-binding types, and SASL2 (XEP-0388) with its inline features — Bind2 (XEP-0386) and what
/// it can enable, XEP-0198 resumption, FAST (XEP-0484) mechanisms. Parsed once per features element;
/// the login machine and `xmppload probe` read the same value.
public struct AuthenticationOffer: Sendable, Equatable {
    /// `<mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>`, in the server's order.
    public var mechanisms: [String]
    /// XEP-0440 `<sasl-channel-binding/>` types, in the server's order; nil when not advertised.
    public var channelBindingTypes: [String]?
    /// SASL2's `<authentication xmlns='urn:xmpp:sasl:2'>`; nil when not offered.
    public var sasl2: SASL2?

    /// SASL2's offer.
    public struct SASL2: Sendable, Equatable {
        /// Its mechanisms (the FAST mechanisms are in `fast`).
        public var mechanisms: [String]
        /// Bind2 (`<bind xmlns='urn:xmpp:bind:0'>` inline); nil when not offered.
        public var bind2: Bind2?
        /// XEP-0198 inline (`<sm xmlns='urn:xmpp:sm:3'/>`): resumption in the authenticate request.
        public var streamManagement: Bool
        /// FAST (`<fast xmlns='urn:xmpp:fast:0'>`) mechanisms; nil when FAST is not offered.
        public var fast: [String]?
        /// FAST's `tls-0rtt` attribute (authentication in TLS early data allowed).
        public var fastZeroRTT: Bool
        /// Every inline feature, as `name` or `name namespace` pairs, for reports (bounded by the element).
        public var inline: [String]
        /// XEP-0480 SASL upgrade tasks offered (`UPGR-SCRAM-SHA-256`, …), for reports.
        public var upgrades: [String]

        public init(
            mechanisms: [String], bind2: Bind2? = nil, streamManagement: Bool = false, fast: [String]? = nil,
            fastZeroRTT: Bool = false, inline: [String] = [], upgrades: [String] = []
        ) {
            self.mechanisms = mechanisms
            self.bind2 = bind2
            self.streamManagement = streamManagement
            self.fast = fast
            self.fastZeroRTT = fastZeroRTT
            self.inline = inline
            self.upgrades = upgrades
        }
    }

    /// Bind2's offer: the features it can enable inline (`<feature var=…/>`).
    public struct Bind2: Sendable, Equatable {
        public var features: [String]

        public init(features: [String]) { self.features = features }

        /// Whether XEP-0198 can be enabled inline.
        public var streamManagement: Bool { features.contains(XMPPNamespace.streamManagement) }
        /// Whether message carbons can be enabled inline.
        public var carbons: Bool { features.contains(AuthenticationOffer.carbonsNamespace) }
    }

    public init(mechanisms: [String], channelBindingTypes: [String]?, sasl2: SASL2?) {
        self.mechanisms = mechanisms
        self.channelBindingTypes = channelBindingTypes
        self.sasl2 = sasl2
    }

    /// Parses `features` (a `<stream:features/>` element).
    public init(features: XMLElement) {
        mechanisms =
            features.firstChild(named: "mechanisms", namespace: XMPPNamespace.sasl)?
            .children(named: "mechanism", namespace: XMPPNamespace.sasl).map(\.text) ?? []
        channelBindingTypes = features.firstChild(named: "sasl-channel-binding", namespace: Self.channelBindingNamespace)
            .map { $0.children(named: "channel-binding", namespace: Self.channelBindingNamespace).compactMap { $0.attribute("type") } }
        sasl2 = features.firstChild(named: "authentication", namespace: Self.sasl2Namespace).map(Self.sasl2)
    }

    private static func sasl2(_ authentication: XMLElement) -> SASL2 {
        var offer = SASL2(mechanisms: authentication.children(named: "mechanism", namespace: sasl2Namespace).map(\.text))
        offer.upgrades = authentication.children(named: "upgrade", namespace: upgradeNamespace).map(\.text)
        guard let inline = authentication.firstChild(named: "inline", namespace: sasl2Namespace) else { return offer }
        for feature in inline.elementChildren {
            offer.inline.append(feature.namespace.isEmpty ? feature.name : "\(feature.name) \(feature.namespace)")
            switch (feature.name, feature.namespace) {
            case ("bind", bind2Namespace):
                let features = feature.firstChild(named: "inline", namespace: bind2Namespace)?
                    .children(named: "feature", namespace: bind2Namespace).compactMap { $0.attribute("var") }
                offer.bind2 = Bind2(features: features ?? [])
            case ("sm", XMPPNamespace.streamManagement):
                offer.streamManagement = true
            case ("fast", fastNamespace):
                offer.fast = feature.children(named: "mechanism", namespace: fastNamespace).map(\.text)
                offer.fastZeroRTT = ["1", "true"].contains(feature.attribute("tls-0rtt") ?? "")
            default:
                break
            }
        }
        return offer
    }

    /// Whether any `-PLUS` mechanism is among `mechanisms`.
    static func offersPlus(_ mechanisms: [String]) -> Bool {
        mechanisms.contains { SASLMechanism(offered: $0)?.usesChannelBinding == true }
    }

    /// XEP-0388.
    public static let sasl2Namespace = "urn:xmpp:sasl:2"
    /// XEP-0386.
    public static let bind2Namespace = "urn:xmpp:bind:0"
    /// XEP-0484.
    public static let fastNamespace = "urn:xmpp:fast:0"
    /// XEP-0440.
    public static let channelBindingNamespace = "urn:xmpp:sasl-cb:0"
    /// XEP-0280 message carbons.
    public static let carbonsNamespace = "urn:xmpp:carbons:2"
    /// XEP-0480 SASL upgrade tasks.
    public static let upgradeNamespace = "urn:xmpp:sasl:upgrade:0"
}
