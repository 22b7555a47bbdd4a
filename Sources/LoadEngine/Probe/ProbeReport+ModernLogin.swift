import XMPPCore

extension ProbeReport {
    /// What the server offers for the modern login, and how the probe's login used it: XEP-0440
    /// channel-binding types and which `-PLUS` mechanisms this connection can use now, SASL2
    /// (XEP-0388) with its inline features — Bind2 (XEP-0386) and what it enables, inline stream
    /// management, FAST (XEP-0484) — XEP-0474 downgrade protection as the SCRAM login saw it, the
    /// login's path and round trips, and a second login with the FAST token the first one got.
    /// Keys are in docs/PROBE.md.
    public struct ModernLogin: Codable, Sendable, Equatable {
        /// XEP-0440 types advertised on the stream that would authenticate; nil: not advertised.
        public var channelBindingTypes: [String]?
        /// The types this connection's TLS layer computed (tls-server-end-point, tls-exporter).
        public var channelBindingAvailable: [String]
        /// `-PLUS` mechanisms offered (SASL1 or SASL2) that this connection can bind now: a type the
        /// server advertises is among `channelBindingAvailable`.
        public var plusUsable: [String]
        public var sasl2: SASL2?
        /// `verified` (the server's XEP-0474 hash matched) or `absent`, once a SCRAM login saw its
        /// server-first message; nil otherwise.
        public var downgradeProtection: String?
        /// How the probe's login went; nil without `--account` or when it failed.
        public var login: Login?
        /// A second connection logging in with the FAST token the first login got; nil when none was issued.
        public var fastLogin: FASTLogin?

        public init(
            channelBindingTypes: [String]?, channelBindingAvailable: [String], plusUsable: [String], sasl2: SASL2? = nil,
            downgradeProtection: String? = nil, login: Login? = nil, fastLogin: FASTLogin? = nil
        ) {
            self.channelBindingTypes = channelBindingTypes
            self.channelBindingAvailable = channelBindingAvailable
            self.plusUsable = plusUsable
            self.sasl2 = sasl2
            self.downgradeProtection = downgradeProtection
            self.login = login
            self.fastLogin = fastLogin
        }

        enum CodingKeys: String, CodingKey {
            case sasl2, login
            case channelBindingTypes = "channel_binding_types"
            case channelBindingAvailable = "channel_binding_available"
            case plusUsable = "plus_usable"
            case downgradeProtection = "downgrade_protection"
            case fastLogin = "fast_login"
        }

        /// SASL2's offer (`AuthenticationOffer.SASL2`).
        public struct SASL2: Codable, Sendable, Equatable {
            public var mechanisms: [String]
            /// Every inline feature (`name namespace`).
            public var inline: [String]
            /// Bind2's inline features (`var`s); nil when Bind2 is not offered.
            public var bind2: [String]?
            /// XEP-0198 resumption inside `<authenticate/>`.
            public var streamManagementInline: Bool
            /// FAST mechanisms; nil when FAST is not offered.
            public var fast: [String]?
            public var fastZeroRTT: Bool
            /// XEP-0480 upgrade tasks offered.
            public var upgrades: [String]

            public init(_ offer: AuthenticationOffer.SASL2) {
                mechanisms = offer.mechanisms
                inline = offer.inline
                bind2 = offer.bind2?.features
                streamManagementInline = offer.streamManagement
                fast = offer.fast
                fastZeroRTT = offer.fastZeroRTT
                upgrades = offer.upgrades
            }

            enum CodingKeys: String, CodingKey {
                case mechanisms, inline, bind2, fast, upgrades
                case streamManagementInline = "stream_management_inline"
                case fastZeroRTT = "fast_0rtt"
            }
        }

        /// A login's `LoginOutcome`, without secrets.
        public struct Login: Codable, Sendable, Equatable {
            /// `classic`, `sasl2`, `sasl2-bind2`, `fast`, `resumed` (`LoginPath`).
            public var path: String
            /// Request/answer exchanges from the TCP connection to logged in (`LoginOutcome.roundTrips`).
            public var roundTrips: Int
            public var mechanism: String
            public var channelBinding: String?
            /// Whether the server issued a FAST token (its expiry; never the token).
            public var fastTokenExpiry: String?
            /// The SASL condition a refused FAST token got (then the password logged in).
            public var fastTokenRejected: String?
            /// From the arrival of the TCP connection to logged in, ms.
            public var milliseconds: Double?

            public init(_ outcome: LoginOutcome, milliseconds: Double?) {
                path = outcome.path.rawValue
                roundTrips = outcome.roundTrips
                mechanism = outcome.mechanism
                channelBinding = outcome.channelBinding?.name
                fastTokenExpiry = outcome.newFASTToken.map(\.expiry)
                fastTokenRejected = outcome.fastTokenRejected
                self.milliseconds = milliseconds
            }

            enum CodingKeys: String, CodingKey {
                case path, mechanism
                case roundTrips = "round_trips"
                case channelBinding = "channel_binding"
                case fastTokenExpiry = "fast_token_expiry"
                case fastTokenRejected = "fast_token_rejected"
                case milliseconds = "ms"
            }
        }

        /// The FAST re-login: its outcome, or why it failed.
        public struct FASTLogin: Codable, Sendable, Equatable {
            public var login: Login?
            /// The failure's typed kind and detail when it did not log in.
            public var failure: String?

            public init(login: Login?, failure: String?) {
                self.login = login
                self.failure = failure
            }
        }
    }
}
