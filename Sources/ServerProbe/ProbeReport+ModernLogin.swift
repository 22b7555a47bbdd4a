import LoadEngine
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

extension ProbeReport {
    /// The modern-login section of the text report.
    static func modernLoginLines(_ modern: ModernLogin) -> [String] {
        var out: [String] = []
        out.append(
            "channel binding (XEP-0440): advertised \(modern.channelBindingTypes.map { list($0) } ?? "none"); "
                + "this connection: \(list(modern.channelBindingAvailable)); -PLUS usable now: \(list(modern.plusUsable))")
        if let sasl2 = modern.sasl2 {
            out.append("sasl2 (XEP-0388): \(list(sasl2.mechanisms)); inline: \(list(sasl2.inline))")
            out.append(
                "  bind2 (XEP-0386): \(sasl2.bind2.map { $0.isEmpty ? "offered, nothing inline" : "inline \($0.joined(separator: ", "))" } ?? "not offered")"
            )
            out.append("  stream management inline (XEP-0198 resumption in SASL2): \(sasl2.streamManagementInline ? "yes" : "no")")
            out.append("  fast (XEP-0484): \(sasl2.fast.map { list($0) + (sasl2.fastZeroRTT ? " (TLS 0-RTT allowed)" : "") } ?? "not offered")")
            if !sasl2.upgrades.isEmpty { out.append("  upgrade tasks (XEP-0480): \(list(sasl2.upgrades))") }
        } else {
            out.append("sasl2 (XEP-0388): not offered")
        }
        if let protection = modern.downgradeProtection {
            out.append("scram downgrade protection (XEP-0474): \(protection == "verified" ? "hash sent and verified" : "no hash sent")")
        }
        if let login = modern.login { out.append("login path: " + loginLine(login)) }
        if let fast = modern.fastLogin {
            if let login = fast.login {
                out.append("fast re-login: " + loginLine(login))
            } else {
                out.append("fast re-login failed: \(fast.failure ?? "?")")
            }
        }
        return out
    }

    private static func loginLine(_ login: ModernLogin.Login) -> String {
        var line = "\(login.path), \(login.mechanism)"
        if let binding = login.channelBinding { line += " bound to \(binding)" }
        line += ", \(login.roundTrips) round trips"
        if let ms = login.milliseconds { line += ", \(milliseconds(ms))" }
        if let expiry = login.fastTokenExpiry { line += "; FAST token issued (expires \(expiry))" }
        if let rejected = login.fastTokenRejected { line += "; FAST token refused (\(rejected)), fell back to the password" }
        return line
    }
}
