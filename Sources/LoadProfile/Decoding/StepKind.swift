import Yams

/// One step key of the profile language: the decoder's single table of what a step key is — whether
/// it may stand alone (`- logout`), whether it needs a logged-in session, and how its settings decode
/// into a `StepAction` and the step's default metric name.
///
/// The built-in steps are rows here; a session feature's steps are rows of `FeatureStepKind.rows`,
/// decoded alike by their form and appended to this table (see docs/ARCHITECTURE.md).
struct StepKind: Sendable {
    let key: String
    /// May be written as a bare name, without settings.
    let mayBeBare: Bool
    /// Sends stanzas, so it may only come after `login`.
    let needsLogin: Bool
    /// Decodes the settings (`value`, nil for a bare name) of the step `node`; nil after reporting.
    let decode: @Sendable (inout ProfileDecoder, _ value: Node?, _ node: Node, _ flow: inout SessionFlow) -> (StepAction, String)?

    static let table: [StepKind] = builtIn + FeatureStepKind.rows.map(feature)

    private static let builtIn: [StepKind] = [
        StepKind(key: "login", mayBeBare: true, needsLogin: false) { d, value, _, _ in d.decodeLoginStep(value) },
        StepKind(key: "logout", mayBeBare: true, needsLogin: true) { _, _, _, _ in (.logout, "logout") },
        StepKind(key: "stay_online", mayBeBare: true, needsLogin: true) { _, _, _, _ in (.stayOnline, "stay_online") },
        StepKind(key: "presence", mayBeBare: false, needsLogin: true) { d, value, node, _ in
            d.decodePresence(value, node: node).map { ($0, ProfileDecoder.presenceName($0)) }
        },
        StepKind(key: "subscribe", mayBeBare: false, needsLogin: true) { d, value, node, _ in
            d.decodeSubscriptionStep("subscribe", value, node: node)
        },
        StepKind(key: "unsubscribe", mayBeBare: false, needsLogin: true) { d, value, node, _ in
            d.decodeSubscriptionStep("unsubscribe", value, node: node)
        },
        StepKind(key: "roster", mayBeBare: false, needsLogin: true) { d, value, node, _ in d.decodeRoster(value, node: node) },
        StepKind(key: "message", mayBeBare: false, needsLogin: true) { d, value, node, _ in d.decodeMessageStep(value, node: node) },
        StepKind(key: "muc_join", mayBeBare: false, needsLogin: true) { d, value, node, _ in d.decodeMUCJoinStep(value, node: node) },
        StepKind(key: "muc_send", mayBeBare: false, needsLogin: true) { d, value, node, _ in d.decodeMUCSendStep(value, node: node) },
        StepKind(key: "muc_nick", mayBeBare: false, needsLogin: true) { d, value, node, _ in d.decodeMUCNickStep(value, node: node) },
        StepKind(key: "muc_leave", mayBeBare: true, needsLogin: true) { _, _, _, _ in (.muc(.leave), "muc.leave") },
        StepKind(key: "ping", mayBeBare: true, needsLogin: true) { d, value, _, _ in d.decodeQueryStep("ping", value) { .ping(to: $0) } },
        StepKind(key: "disco_info", mayBeBare: true, needsLogin: true) { d, value, _, _ in
            d.decodeQueryStep("disco_info", value) { .discoInfo(to: $0) }
        },
        StepKind(key: "version", mayBeBare: true, needsLogin: true) { d, value, _, _ in d.decodeQueryStep("version", value) { .version(to: $0) } },
        StepKind(key: "vcard", mayBeBare: true, needsLogin: true) { d, value, _, _ in d.decodeQueryStep("vcard", value) { .vcard(to: $0) } },
        StepKind(key: "raw", mayBeBare: false, needsLogin: true) { d, value, _, _ in d.decodeRawStep(value) },
        StepKind(key: "wait", mayBeBare: true, needsLogin: true) { d, value, _, _ in d.decodeWaitStep(value) },
        StepKind(key: "think", mayBeBare: false, needsLogin: false) { d, value, node, _ in d.decodeThinkStep(value, node: node) },
        StepKind(key: "repeat", mayBeBare: false, needsLogin: false) { d, value, node, flow in
            d.decodeRepeat(value, node: node, flow: &flow).map { (.loop($0.count, $0.body), "repeat") }
        },
        StepKind(key: "choose", mayBeBare: false, needsLogin: false) { d, value, node, flow in
            d.decodeChoose(value, node: node, flow: &flow).map { (.choose($0), "choose") }
        },
    ]

    /// A feature step's row as a step kind: it may stand alone when its row allows, and needs a login.
    static func feature(_ kind: FeatureStepKind) -> StepKind {
        StepKind(key: kind.key, mayBeBare: kind.mayBeBare, needsLogin: true) { d, value, node, _ in d.decodeFeatureStep(kind, value, node: node) }
    }

    static let byKey: [String: StepKind] = Dictionary(uniqueKeysWithValues: table.map { ($0.key, $0) })
}
