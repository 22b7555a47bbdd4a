// What a login is told: the login machine's configuration, a value.

extension LoginMachine {
    /// Everything a login needs to know. Values, no references.
    public struct Configuration: Sendable {
        public var domain: String
        public var username: String
        public var password: String
        public var resource: String
        public var tls: TLSPolicy
        /// Forced SASL mechanism; nil picks the strongest one offered.
        public var mechanism: SASLMechanism?
        /// Register the account with XEP-0077 before authenticating (`conflict` = already exists = fine).
        public var register: Bool
        /// SCRAM iteration counts above this fail with `sasl-iteration-count` before any PBKDF2 work.
        public var maxSCRAMIterations: Int
        /// When true, a SCRAM key-cache miss returns `.deriveKey` (derive elsewhere, then call
        /// `keyDerived(_:)`) instead of running PBKDF2 inside `received(_:)`.
        public var deriveKeysElsewhere: Bool
        /// XEP-0198: after SASL, resume the stream with this `<resume/>` instead of binding a resource,
        /// when the server offers stream management (`.resumed` or, on `<failed/>`, `.resumeFailed`
        /// and a fresh bind follow). With SASL2 and inline stream management offered, it travels
        /// inside `<authenticate/>` instead (one round trip less). Nil: a fresh login.
        public var resume: XMLElement?
        /// Which login protocol may be used: `.auto` takes SASL2 where offered, `.classic` never,
        /// `.sasl2` always (`sasl2-not-offered` without it).
        public var mode: LoginMode
        /// XEP-0388 `<user-agent id=…>`: a UUID (v4) stable per virtual user. Servers key FAST tokens
        /// and Bind2's stable resources on it (and end an older session with the same id), so each
        /// virtual user needs its own. Nil: no `<user-agent/>` (no FAST token is asked for then).
        public var userAgentID: String?
        /// XEP-0388 `<software/>` in the user agent.
        public var userAgentSoftware: String
        /// XEP-0386 `<tag/>`: the prefix of the resource Bind2 assigns (servers add their own part).
        public var bind2Tag: String
        /// Enable XEP-0198 inside Bind2 when the server offers it there; `inlineStreamManagementResume`
        /// asks for resumption. The answer is `LoginOutcome.streamManagement`.
        public var inlineStreamManagement: Bool
        public var inlineStreamManagementResume: Bool
        /// Enable message carbons (XEP-0280) inside Bind2 when the server offers it there.
        public var enableCarbons: Bool
        /// Log in with this FAST token (XEP-0484) when the server offers its mechanism and the
        /// connection has its channel binding; a refused token falls back to the password on the
        /// same stream (`LoginOutcome.fastTokenRejected`).
        public var fastToken: FASTToken?
        /// Ask for a FAST token at a password login (the strongest HT mechanism this connection can
        /// use); it arrives as `LoginOutcome.newFASTToken`. Needs `userAgentID`.
        public var requestFASTToken: Bool

        public init(
            domain: String, username: String, password: String, resource: String,
            tls: TLSPolicy = .startTLS, mechanism: SASLMechanism? = nil, register: Bool = false,
            maxSCRAMIterations: Int = SCRAMClient.defaultMaxIterations, deriveKeysElsewhere: Bool = false,
            mode: LoginMode = .auto, userAgentID: String? = nil, userAgentSoftware: String = "xmppload",
            bind2Tag: String = "xmppload", inlineStreamManagement: Bool = false, inlineStreamManagementResume: Bool = false,
            enableCarbons: Bool = false, fastToken: FASTToken? = nil, requestFASTToken: Bool = false
        ) {
            self.mode = mode
            self.userAgentID = userAgentID
            self.userAgentSoftware = userAgentSoftware
            self.bind2Tag = bind2Tag
            self.inlineStreamManagement = inlineStreamManagement
            self.inlineStreamManagementResume = inlineStreamManagementResume
            self.enableCarbons = enableCarbons
            self.fastToken = fastToken
            self.requestFASTToken = requestFASTToken
            self.maxSCRAMIterations = maxSCRAMIterations
            self.deriveKeysElsewhere = deriveKeysElsewhere
            self.domain = domain
            self.username = username
            self.password = password
            self.resource = resource
            self.tls = tls
            self.mechanism = mechanism
            self.register = register
        }
    }
}
