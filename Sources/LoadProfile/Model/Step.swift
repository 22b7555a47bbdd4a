/// One step of a profile with its metric name, error policy and timeout.
public struct Step: Sendable, Equatable {
    /// The name under which the step is timed and counted (default derived from the action).
    public var name: String
    public var action: StepAction
    public var onError: ErrorPolicy
    /// nil: the profile's step timeout.
    public var timeout: Duration?
    public var location: SourceLocation

    public init(
        name: String, action: StepAction, onError: ErrorPolicy = .stop, timeout: Duration? = nil,
        location: SourceLocation = SourceLocation(file: "", line: 0, column: 0)
    ) {
        self.name = name
        self.action = action
        self.onError = onError
        self.timeout = timeout
        self.location = location
    }
}

/// What happens when a step fails: end the session (default) or count the error and go on.
public enum ErrorPolicy: String, Sendable, Equatable {
    case stop
    case `continue`
}

/// What a step does.
public indirect enum StepAction: Sendable, Equatable {
    /// Connect, TLS, SASL, bind, session.
    case login(LoginOptions)
    case presence(PresenceAction)
    case roster(RosterAction)
    case message(MessageAction)
    case muc(MUCAction)
    case iq(IQAction)
    /// A step of a session feature (carbons, client state, archive query, PEP publish, blocking, …):
    /// `FeatureStep`, decoded by its row (`FeatureStepKind`).
    case feature(FeatureStep)
    case wait(WaitCondition)
    case think(ThinkTime)
    case loop(LoopCount, [Step])
    case choose([WeightedBranch])
    /// Stay logged in, answering pings, until the run ends.
    case stayOnline
    case logout
}

public enum PresenceAction: Sendable, Equatable {
    /// Broadcast presence (initial or update); timed until the server echoes our own presence.
    case available(show: String?, status: Template?, priority: Int?)
    case directed(to: Template, type: String?, show: String?, status: Template?)
    case unavailable(status: Template?)
    case subscribe(to: Template)
    case unsubscribe(to: Template)
}

public enum RosterAction: Sendable, Equatable {
    case get
    case add(jid: Template, name: Template?, groups: [String])
    case rename(jid: Template, name: Template)
    case remove(jid: Template)
}

/// Who a message goes to.
public enum MessageTarget: Sendable, Equatable {
    /// A random other session of the run that is online now.
    case randomOnline
    case jid(Template)
    /// The account after this one (wrapping within the run's accounts): pairs for ping-pong.
    case next
    case selfJID
}

public enum MessageBody: Sendable, Equatable {
    /// A filler body of this many bytes.
    case size(Int)
    case literal(Template)
}

public enum MessageType: String, Sendable, Equatable, CaseIterable {
    case chat
    case normal
    case groupchat
    case headline
}

/// `count` messages with `interval` think time between them. Every message is stamped.
public struct MessageAction: Sendable, Equatable {
    public var to: MessageTarget
    public var body: MessageBody
    public var type: MessageType
    public var count: Int
    public var interval: ThinkTime?

    public init(
        to: MessageTarget, body: MessageBody = .size(64), type: MessageType = .chat, count: Int = 1,
        interval: ThinkTime? = nil
    ) {
        self.to = to
        self.body = body
        self.type = type
        self.count = count
        self.interval = interval
    }
}

public enum MUCAction: Sendable, Equatable {
    /// Join `room` (a name, or a full room JID) on `service` (default `conference.${domain}`).
    case join(room: Template, service: Template?, nick: Template?, history: Int?)
    /// Groupchat to the joined room; fan-out latency is measured by every receiver.
    case send(body: MessageBody, count: Int, interval: ThinkTime?)
    case changeNick(Template)
    case leave
}

public enum IQAction: Sendable, Equatable {
    case ping(to: Template?)
    case discoInfo(to: Template?)
    case version(to: Template?)
    case vcard(to: Template?)
    /// Raw XML (templated; `${id}` is the request id) and whether to wait for a result with that id.
    case raw(xml: Template, expectResult: Bool)
}

/// Wait until a stanza matching all given fields arrives, or fail after `timeout`.
public struct WaitCondition: Sendable, Equatable {
    /// message, presence or iq; nil: any.
    public var element: String?
    public var type: String?
    /// `*` matches any run of characters.
    public var from: Template?
    public var timeout: Duration

    public init(element: String? = nil, type: String? = nil, from: Template? = nil, timeout: Duration = .seconds(30)) {
        self.element = element
        self.type = type
        self.from = from
        self.timeout = timeout
    }
}

public enum LoopCount: Sendable, Equatable {
    case times(Int)
    case duration(Duration)
    case forever
}

public struct WeightedBranch: Sendable, Equatable {
    public var weight: Double
    public var steps: [Step]

    public init(weight: Double, steps: [Step]) {
        self.weight = weight
        self.steps = steps
    }
}

/// Where something is in a profile file (1-based line and column).
public struct SourceLocation: Sendable, Hashable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var column: Int

    public init(file: String, line: Int, column: Int) {
        self.file = file
        self.line = line
        self.column = column
    }

    public var description: String { "\(file):\(line):\(column)" }
}
