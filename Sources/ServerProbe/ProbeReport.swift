import LoadEngine
import LoadResults

/// What `xmppload probe` learned about one server over one connection: a plain value, written as
/// `server.json` (`--json`) and rendered as text (`ProbeReport+Text`), with the profile settings it
/// implies (`ProbeReport+Implications`).
///
/// Every section is optional: nil means "not asked or not reached" (no `--account`: nothing after
/// SASL; a login that failed: nothing after its phase). A query that was asked but not answered is
/// not nil: its `QueryOutcome` says `timeout`. Keys are snake_case and stable (docs/PROBE.md);
/// durations are milliseconds measured on the monotonic clock, timestamps are ISO 8601 UTC labels.
public struct ProbeReport: Codable, Sendable, Equatable {
    /// The address probed, `HOST:PORT`.
    public var server: String
    /// The XMPP domain addressed in the stream header.
    public var domain: String
    /// The bare JID logged in with; nil without `--account` (the probe stops before SASL).
    public var account: String?
    /// `starttls`, `direct` or `none` (`TLSMode`).
    public var tlsMode: String
    /// When the probe started (wall clock, a label only).
    public var startedAt: String
    /// `<stream:features/>` as offered at each stage reached, in order.
    public var streamFeatures: [FeatureStage] = []
    public var tls: TLSFacts?
    public var sasl: SASLFacts?
    public var registration: Registration?
    /// XEP-0198 namespaces among the features after SASL (`urn:xmpp:sm:3`, `urn:xmpp:sm:2`, …);
    /// nil when the probe did not get that far, empty when none was offered.
    public var streamManagement: [String]?
    /// SASL2, Bind2, FAST, channel binding and downgrade protection (`ProbeReport+ModernLogin`);
    /// nil when the probe did not reach the stream that would authenticate.
    public var modernLogin: ModernLogin?
    public var login: Login?
    public var discoInfo: DiscoInfo?
    public var discoItems: DiscoItems?
    public var software: Software?
    public var presence: PresenceEcho?
    public var ping: QueryOutcome?
    public var entityTime: EntityTime?
    public var streamClose: StreamClose?
    /// Why the probe could not connect or log in; nil when it did.
    public var failure: Failure?
    /// The profile settings the facts imply (`impliedSettings()`), one sentence each.
    public var implications: [String] = []

    public init(server: String, domain: String, account: String?, tlsMode: String, startedAt: String) {
        self.server = server
        self.domain = domain
        self.account = account
        self.tlsMode = tlsMode
        self.startedAt = startedAt
    }

    enum CodingKeys: String, CodingKey {
        case server, domain, account, tls, sasl, registration, login, software, presence, ping, failure, implications
        case tlsMode = "tls_mode"
        case startedAt = "started_at"
        case streamFeatures = "stream_features"
        case streamManagement = "stream_management"
        case discoInfo = "disco_info"
        case discoItems = "disco_items"
        case entityTime = "entity_time"
        case streamClose = "stream_close"
        case modernLogin = "modern_login"
    }

    /// One `<stream:features/>`: the stage it was offered at and its children (name and namespace).
    public struct FeatureStage: Codable, Sendable, Equatable {
        public var stage: Stage
        public var features: [ServerFacts.StreamFeature]

        public init(stage: Stage, features: [ServerFacts.StreamFeature]) {
            self.stage = stage
            self.features = features
        }

        /// When the features were offered: on the first stream, after TLS, after SASL.
        public enum Stage: String, Codable, Sendable {
            case initial
            case afterTLS = "after_tls"
            case afterSASL = "after_sasl"
        }
    }

    /// The TLS session and the server's certificate.
    public struct TLSFacts: Codable, Sendable, Equatable {
        /// e.g. "TLSv1.3".
        public var version: String?
        /// IANA name of the cipher suite, from the ServerHello.
        public var cipher: String?
        public var certificate: Certificate?
        /// `verified` (chain and name), `failed` (see `problem`), or `chain-only` (the chain verified,
        /// the name was compared with the certificate's DNS names by the probe: see `nameMatches`).
        public var verification: String
        /// Why verification failed: `self-signed`, `expired`, `not-yet-valid`, `untrusted`, `hostname-mismatch`.
        public var problem: String?
        /// Whether the domain matches one of the certificate's DNS names (nil: not checked).
        public var nameMatches: Bool?

        public init(
            version: String?, cipher: String?, certificate: Certificate?, verification: String, problem: String? = nil,
            nameMatches: Bool? = nil
        ) {
            self.version = version
            self.cipher = cipher
            self.certificate = certificate
            self.verification = verification
            self.problem = problem
            self.nameMatches = nameMatches
        }

        enum CodingKeys: String, CodingKey {
            case version, cipher, certificate, verification, problem
            case nameMatches = "name_matches"
        }
    }

    /// The server's leaf certificate.
    public struct Certificate: Codable, Sendable, Equatable {
        /// e.g. "CN=localhost, O=Prosody".
        public var subject: String
        public var issuer: String
        /// ISO 8601 UTC.
        public var notBefore: String
        public var notAfter: String
        /// subjectAltName DNS names.
        public var dnsNames: [String]

        public init(subject: String, issuer: String, notBefore: String, notAfter: String, dnsNames: [String]) {
            self.subject = subject
            self.issuer = issuer
            self.notBefore = notBefore
            self.notAfter = notAfter
            self.dnsNames = dnsNames
        }

        enum CodingKeys: String, CodingKey {
            case subject, issuer
            case notBefore = "not_before"
            case notAfter = "not_after"
            case dnsNames = "dns_names"
        }
    }

    /// SASL mechanisms offered (on the stream that would authenticate), split by what xmppload speaks.
    public struct SASLFacts: Codable, Sendable, Equatable {
        public var offered: [String]
        /// Offered and usable with `--sasl` (`SASLMechanism.isSupported`).
        public var supported: [String]
        /// Offered but not spoken by xmppload (DIGEST-MD5, X-OAUTH2, *-PLUS, …).
        public var unsupported: [String]
        /// The mechanism the probe's login used, when it logged in.
        public var used: String?

        public init(offered: [String], supported: [String], unsupported: [String], used: String? = nil) {
            self.offered = offered
            self.supported = supported
            self.unsupported = unsupported
            self.used = used
        }
    }

    /// XEP-0077 in-band registration.
    public struct Registration: Codable, Sendable, Equatable {
        /// The stream features advertise `http://jabber.org/features/iq-register`.
        public var offered: Bool
        /// The answer to `<iq type=get><query xmlns=jabber:iq:register/>` (nil: not asked).
        public var form: QueryOutcome?
        /// The form's fields (legacy elements, or a data form's `var`s), without `instructions`.
        public var fields: [String]?
        public var instructions: String?

        public init(offered: Bool, form: QueryOutcome? = nil, fields: [String]? = nil, instructions: String? = nil) {
            self.offered = offered
            self.form = form
            self.fields = fields
            self.instructions = instructions
        }

        /// The fields beyond username and password (what `provision` cannot fill in).
        public var extraFields: [String] {
            (fields ?? []).filter { !["username", "password", "FORM_TYPE", "registered"].contains($0) }
        }
    }

    /// How the login went: the bound JID and how long each phase took.
    public struct Login: Codable, Sendable, Equatable {
        public var jid: String
        public var phases: [PhaseTime]

        public init(jid: String, phases: [PhaseTime]) {
            self.jid = jid
            self.phases = phases
        }
    }

    /// One login phase (`LoginPhase` raw value) and its duration, ms.
    public struct PhaseTime: Codable, Sendable, Equatable {
        public var phase: String
        public var milliseconds: Double

        public init(phase: String, milliseconds: Double) {
            self.phase = phase
            self.milliseconds = milliseconds
        }

        enum CodingKeys: String, CodingKey {
            case phase
            case milliseconds = "ms"
        }
    }

    /// How one iq query was answered.
    public struct QueryOutcome: Codable, Sendable, Equatable {
        /// `result`, `error` or `timeout`.
        public var answer: Answer
        /// The error's defined condition, for `error`.
        public var condition: String?
        /// Round trip, ms (nil for `timeout`).
        public var roundTripMilliseconds: Double?

        public init(answer: Answer, condition: String? = nil, roundTripMilliseconds: Double? = nil) {
            self.answer = answer
            self.condition = condition
            self.roundTripMilliseconds = roundTripMilliseconds
        }

        /// How the server answered: an iq result, an iq error, or nothing within the wait.
        public enum Answer: String, Codable, Sendable { case result, error, timeout }

        enum CodingKeys: String, CodingKey {
            case answer, condition
            case roundTripMilliseconds = "rtt_ms"
        }
    }

    /// XEP-0030 disco#info of the server's domain.
    public struct DiscoInfo: Codable, Sendable, Equatable {
        public var outcome: QueryOutcome
        public var identities: [ServerFacts.Identity]
        /// Sorted `var`s.
        public var features: [String]

        public init(outcome: QueryOutcome, identities: [ServerFacts.Identity] = [], features: [String] = []) {
            self.outcome = outcome
            self.identities = identities
            self.features = features
        }
    }

    /// XEP-0030 disco#items of the server's domain, and the MUC service among them (an item whose
    /// disco#info has a `conference/text` identity).
    public struct DiscoItems: Codable, Sendable, Equatable {
        public var outcome: QueryOutcome
        public var items: [String]
        public var mucService: String?

        public init(outcome: QueryOutcome, items: [String] = [], mucService: String? = nil) {
            self.outcome = outcome
            self.items = items
            self.mucService = mucService
        }

        enum CodingKeys: String, CodingKey {
            case outcome, items
            case mucService = "muc_service"
        }
    }

    /// XEP-0092 software version.
    public struct Software: Codable, Sendable, Equatable {
        public var outcome: QueryOutcome
        public var name: String?
        public var version: String?
        public var os: String?

        public init(outcome: QueryOutcome, name: String? = nil, version: String? = nil, os: String? = nil) {
            self.outcome = outcome
            self.name = name
            self.version = version
            self.os = os
        }
    }

    /// Whether our initial presence came back to our own full JID (RFC 6121 §4.2.2) within the wait.
    public struct PresenceEcho: Codable, Sendable, Equatable {
        public var echoed: Bool
        /// Send to echo, ms.
        public var latencyMilliseconds: Double?
        /// How long the probe waited at most, ms.
        public var waitedMilliseconds: Double

        public init(echoed: Bool, latencyMilliseconds: Double?, waitedMilliseconds: Double) {
            self.echoed = echoed
            self.latencyMilliseconds = latencyMilliseconds
            self.waitedMilliseconds = waitedMilliseconds
        }

        enum CodingKeys: String, CodingKey {
            case echoed
            case latencyMilliseconds = "latency_ms"
            case waitedMilliseconds = "waited_ms"
        }
    }

    /// XEP-0202 entity time: how the first query was answered, and the clock offset from all answers.
    public struct EntityTime: Codable, Sendable, Equatable {
        public var outcome: QueryOutcome
        public var clock: ClockOffset?

        public init(outcome: QueryOutcome, clock: ClockOffset? = nil) {
            self.outcome = outcome
            self.clock = clock
        }
    }

    /// Whether the server answered our `</stream:stream>` with its own within the wait.
    public struct StreamClose: Codable, Sendable, Equatable {
        public var answered: Bool
        public var milliseconds: Double?

        public init(answered: Bool, milliseconds: Double?) {
            self.answered = answered
            self.milliseconds = milliseconds
        }

        enum CodingKeys: String, CodingKey {
            case answered
            case milliseconds = "ms"
        }
    }

    /// Why the probe could not connect or log in.
    public struct Failure: Codable, Sendable, Equatable {
        /// The login phase it failed in (`LoginPhase` raw value: connect, tls, features, sasl, bind, session).
        public var phase: String
        /// The typed error kind (as counted in run results: `refused`, `sasl-not-authorized`, `timeout-login`, …).
        public var kind: String
        public var detail: String
        public var hint: String?

        public init(phase: String, kind: String, detail: String, hint: String? = nil) {
            self.phase = phase
            self.kind = kind
            self.detail = detail
            self.hint = hint
        }
    }
}
