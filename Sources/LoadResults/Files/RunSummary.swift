import Foundation

/// `summary.json`: the whole run in one value (issue #3's schema plus service latency and metadata).
///
/// Latencies are milliseconds read from HDR histograms (never averaged); `latency_ms` counts from the
/// intended start (coordinated-omission corrected), `service_latency_ms` from the actual send.
public struct RunSummary: Codable, Sendable, Equatable {
    public struct Sessions: Codable, Sendable, Equatable {
        public var started: UInt64
        public var loggedIn: UInt64
        public var failed: UInt64
        public var completed: UInt64
        public var peakConcurrent: Int64
        /// Reconnect attempts after drops, and those that logged in again (absent in older files).
        public var reconnects: UInt64?
        public var reconnected: UInt64?
        /// Sessions dropped on purpose by `--churn`.
        public var churned: UInt64?
        /// XEP-0198: streams resumed after a drop, resumptions refused (a fresh login followed), and
        /// our stanzas never acknowledged when a stream was given up (absent in older files).
        public var resumed: UInt64?
        public var resumeFailed: UInt64?
        public var unacknowledgedStanzas: UInt64?
        enum CodingKeys: String, CodingKey {
            case started
            case loggedIn = "logged_in"
            case failed, completed
            case peakConcurrent = "peak_concurrent"
            case reconnects, reconnected, churned, resumed
            case resumeFailed = "resume_failed"
            case unacknowledgedStanzas = "unacknowledged_stanzas"
        }
    }

    public struct Percentiles: Codable, Sendable, Equatable {
        public var count: UInt64
        public var p50: Double
        public var p90: Double
        public var p99: Double
        public var p999: Double
        public var max: Double

        public init(_ histogram: LatencyHistogram) {
            count = histogram.count
            p50 = histogram.milliseconds(atPercentile: 50)
            p90 = histogram.milliseconds(atPercentile: 90)
            p99 = histogram.milliseconds(atPercentile: 99)
            p999 = histogram.milliseconds(atPercentile: 99.9)
            max = Double(histogram.maxMicroseconds) / 1000
        }
    }

    public struct Messages: Codable, Sendable, Equatable {
        public var sent: UInt64
        public var received: UInt64
        public var lost: UInt64
        public var duplicated: UInt64
        public var reordered: UInt64
        public var groupchatSent: UInt64
        public var groupchatReceived: UInt64
        /// The lost messages by the interval they were sent in (`MessageLossClock`); absent in older files.
        public var lostWhenSent: [MessageLossBucket]? = nil
        enum CodingKeys: String, CodingKey {
            case sent, received, lost, duplicated, reordered
            case groupchatSent = "groupchat_sent"
            case groupchatReceived = "groupchat_received"
            case lostWhenSent = "lost_when_sent"
        }
    }

    /// XEP-0077 in-band registration outcomes (`login: {register: true}`, `xmppload provision`).
    public struct Accounts: Codable, Sendable, Equatable {
        public var created: UInt64
        public var existed: UInt64
    }

    public struct RoomSummary: Codable, Sendable, Equatable {
        public var sent: UInt64
        public var expected: UInt64
        public var received: UInt64
        public var completeness: Double
    }

    public struct Bytes: Codable, Sendable, Equatable {
        public var sent: UInt64
        public var received: UInt64
    }

    /// Connections per transport and the web transports' HTTP traffic (absent when every
    /// connection was plain TCP, and in older files).
    public struct Transports: Codable, Sendable, Equatable {
        public var tcp: UInt64
        public var webSocket: UInt64
        public var bosh: UInt64
        public var httpRequests: UInt64
        public var httpResponses: UInt64
        enum CodingKeys: String, CodingKey {
            case tcp
            case webSocket = "websocket"
            case bosh
            case httpRequests = "http_requests"
            case httpResponses = "http_responses"
        }
    }

    public struct Generator: Codable, Sendable, Equatable {
        public var cpuSeconds: Double
        public var peakRSSBytes: UInt64
        public var maxLoopLagMilliseconds: Double
        public var droppedArrivals: UInt64
        public var saturated: Bool
        public var saturatedIntervals: Int
        /// The file-descriptor limit the generator ran with (raised to the hard limit) and the hard
        /// limit; absent in older files. The lowest over generators when merged.
        public var fdLimit: Int?
        public var fdHardLimit: Int?
        enum CodingKeys: String, CodingKey {
            case cpuSeconds = "cpu_seconds"
            case peakRSSBytes = "peak_rss_bytes"
            case maxLoopLagMilliseconds = "max_loop_lag_ms"
            case droppedArrivals = "dropped_arrivals"
            case saturated
            case saturatedIntervals = "saturated_intervals"
            case fdLimit = "fd_limit"
            case fdHardLimit = "fd_hard_limit"
        }
    }

    public var runID: String
    public var profile: String
    public var startedAt: Date
    public var endedAt: Date
    public var durationSeconds: Double
    public var stopReason: String
    public var sessions: Sessions
    public var latencyMilliseconds: [String: Percentiles]
    public var serviceLatencyMilliseconds: [String: Percentiles]
    public var messages: Messages
    public var bytes: Bytes
    /// Connections per transport, when any was WebSocket or BOSH.
    public var transports: Transports?
    public var accounts: Accounts
    /// Group chat fan-out per room (MUC profiles).
    public var rooms: [String: RoomSummary]
    public var stanzas: [String: UInt64]
    public var errors: [String: UInt64]
    /// Occurrences folded into `-other` keys per label family (`CardinalityCap`); nil when none.
    public var folded: [String: UInt64]?
    /// One example text per error kind, as the server wrote it (`ErrorExamples`); nil when none.
    public var errorExamples: [String: String]?
    /// Failed logins per phase they failed in (`connect` … `resume`); nil when no login failed.
    public var loginFailuresByPhase: [String: UInt64]?
    /// Failed logins per phase and error kind (`LoginFailures`); nil when no login failed.
    public var loginFailures: [String: [String: UInt64]]?
    /// Failed writes of `intervals.jsonl` (disk full); nil when every write succeeded.
    public var intervalWrites: IntervalWriteFailures?
    public var generator: Generator
    /// Every threshold with its value and pass/fail (absent when the run had none).
    public var thresholds: [ThresholdResult]?
    /// Trend findings (login/message p99, error rate, generator RSS) after the warm-up.
    public var findings: [TrendFinding]?
    /// The run's own verdict (did the sessions do what the plan asked), with planned against done.
    public var verdict: RunOutcome?
    /// Why trends were not judged (too short after the warm-up and ramp); nil when they were.
    public var trendsNote: String?
    /// Sessions that ended with an error ÷ sessions started, 0…1 (`ErrorRate`).
    public var errorRate: Double?
    /// What the server did not do that the run asked of it (`ServerNotice`); nil when nothing.
    public var notices: [ServerNotice]?
    /// chat sends and distinct receipts per sender segment, for reconciling the
    /// generators of a `--segment` run in `report` (absent in older files).
    public var ledger: SegmentLedger?
    /// this generator's wall clock against the server's XEP-0202 time (absent when the
    /// server did not answer, and in older files).
    public var clock: ClockOffset?
    /// Outages found in the intervals (`OutageFinder`), in time order; nil when not analysed.
    public var outages: [Outage]?
    /// Lost messages sent inside the outages' windows vs outside them (needs `messages.lost_when_sent`).
    public var messageLoss: MessageLossSplit?
    /// The generator's RSS slope over the end of the load (`RSSTail`).
    public var rssTail: RSSTail?
    /// Each `--monitor` source summed up over the run (`MonitorSummary`); absent without monitors.
    public var monitors: MonitorSummary?
    /// What the load cost each monitored server process (`ServerCosts`: CPU per login and per
    /// message, memory per online session); absent without a process monitor.
    public var serverCosts: [ServerCosts]?
    /// Who limited the run: `generator`, `server`, `none` or `unknown` (the server side unseen);
    /// `limit` holds the evidence (`LimitAttribution`). Set by the verdict; absent in older files.
    public var limitedBy: String?
    public var limit: LimitAttribution?
    /// Per-node figures when the run had more than one endpoint (`NodeSummary`); absent otherwise.
    public var nodes: NodeSummary?
    /// What to do about the generator's own limits that errors hit (`ConnectionHint`), one line per
    /// kind; absent when none.
    public var hints: [String]?
    /// Changes made through `--control-port` while the run went (`ControlEvent`), in time order;
    /// absent when nobody steered the run.
    public var controlEvents: [ControlEvent]?
    /// Logins per login path (`classic`, `sasl2`, `sasl2-bind2`, `fast`, `resumed`): count,
    /// reconnects, round trips, latency (`LoginPathSummary`); absent when no login was measured by path.
    public var loginPaths: [String: LoginPathSummary]?

    enum CodingKeys: String, CodingKey {
        case runID = "run_id"
        case profile
        case startedAt = "started_at"
        case endedAt = "ended_at"
        case durationSeconds = "duration_s"
        case stopReason = "stop_reason"
        case sessions
        case latencyMilliseconds = "latency_ms"
        case serviceLatencyMilliseconds = "service_latency_ms"
        case messages, bytes, transports, accounts, rooms, stanzas, errors, folded, generator
        case thresholds, findings, verdict, ledger, clock, outages, nodes, hints
        case trendsNote = "trends_note"
        case errorRate = "error_rate"
        case notices
        case monitors
        case serverCosts = "server_costs"
        case limitedBy = "limited_by"
        case limit
        case messageLoss = "message_loss"
        case rssTail = "rss_tail"
        case errorExamples = "error_examples"
        case intervalWrites = "interval_writes"
        case controlEvents = "control_events"
        case loginFailuresByPhase = "login_failures_by_phase"
        case loginFailures = "login_failures"
        case loginPaths = "login_paths"
    }

    /// Builds the summary from the run's accumulated snapshot and its intervals. `descriptorLimits`
    /// (by default this process's) go into the hint for `fd-exhausted`.
    public init(
        runID: String, profile: String, startedAt: Date, endedAt: Date, stopReason: String,
        total: IntervalSnapshot, healths: [GeneratorHealth], peakConcurrent: Int64, ledger: LedgerCounts,
        descriptorLimits: ConnectionHint.DescriptorLimits? = .current()
    ) {
        self.runID = runID
        self.profile = profile
        self.startedAt = startedAt
        self.endedAt = endedAt
        durationSeconds = total.end - total.start
        self.stopReason = stopReason
        sessions = Sessions(
            started: total.counter(.sessionsStarted), loggedIn: total.counter(.sessionsLoggedIn),
            failed: total.counter(.sessionsFailed), completed: total.counter(.sessionsCompleted),
            peakConcurrent: peakConcurrent, reconnects: total.counter(.sessionsReconnects),
            reconnected: total.counter(.sessionsReconnected), churned: total.counter(.sessionsChurned),
            resumed: total.counter(.sessionsResumed), resumeFailed: total.counter(.sessionsResumeFailed),
            unacknowledgedStanzas: total.counter(.streamManagementUnacknowledged))
        latencyMilliseconds = total.latency.mapValues(Percentiles.init)
        serviceLatencyMilliseconds = total.serviceLatency.mapValues(Percentiles.init)
        messages = Messages(
            sent: total.counter(.messagesSent), received: total.counter(.messagesReceived),
            lost: ledger.lost, duplicated: ledger.duplicated, reordered: ledger.reordered,
            groupchatSent: total.counter(.groupchatSent), groupchatReceived: total.counter(.groupchatReceived))
        bytes = Bytes(sent: total.counter(.bytesSent), received: total.counter(.bytesReceived))
        let web = total.counter(.connectionsWebSocket) + total.counter(.connectionsBOSH)
        transports =
            web == 0
            ? nil
            : Transports(
                tcp: total.counter(.connectionsTCP), webSocket: total.counter(.connectionsWebSocket),
                bosh: total.counter(.connectionsBOSH), httpRequests: total.counter(.httpRequests),
                httpResponses: total.counter(.httpResponses))
        rooms = total.rooms.mapValues { RoomSummary(sent: $0.sent, expected: $0.expected, received: $0.received, completeness: $0.completeness) }
        accounts = Accounts(created: total.counter(.accountsCreated), existed: total.counter(.accountsExisted))
        var stanzas: [String: UInt64] = [:]
        for counter in Counter.allCases
        where counter.name.hasPrefix("stanzas_") || counter == .unexpectedStanzas
            || counter == .pingsAnswered || counter == .subscriptionsAccepted
        {
            stanzas[counter.name.replacingOccurrences(of: "stanzas_", with: "")] = total.counter(counter)
        }
        self.stanzas = stanzas
        errors = total.errors
        errorRate = ErrorRate.proportion(failed: total.counter(.sessionsFailed), started: total.counter(.sessionsStarted))
        let notices = ServerNotice.notices(total)
        self.notices = notices.isEmpty ? nil : notices
        folded = total.folded
        errorExamples = total.errorExamples
        loginFailures = total.loginFailures
        loginFailuresByPhase = total.loginFailures.map(LoginFailures.byPhase)
        loginPaths = LoginPathSummary.paths(in: total)
        generator = Generator(
            cpuSeconds: healths.reduce(0) { $0 + $1.cpuSeconds },
            peakRSSBytes: healths.map { max($0.rssBytes, $0.peakRSSBytes ?? 0) }.max() ?? 0,
            maxLoopLagMilliseconds: Double(total.loopLag.maxMicroseconds) / 1000,
            droppedArrivals: total.counter(.droppedArrivals),
            saturated: healths.contains { $0.saturated },
            saturatedIntervals: healths.filter(\.saturated).count,
            fdLimit: descriptorLimits?.soft, fdHardLimit: descriptorLimits?.hard)
        nodes = total.nodes.map(NodeSummary.init)
        let hints = ConnectionHint.hints(errors: total.errors, limits: descriptorLimits)
        self.hints = hints.isEmpty ? nil : hints
    }
}
