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
        enum CodingKeys: String, CodingKey {
            case started
            case loggedIn = "logged_in"
            case failed, completed
            case peakConcurrent = "peak_concurrent"
            case reconnects, reconnected, churned
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
        enum CodingKeys: String, CodingKey {
            case sent, received, lost, duplicated, reordered
            case groupchatSent = "groupchat_sent"
            case groupchatReceived = "groupchat_received"
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

    public struct Generator: Codable, Sendable, Equatable {
        public var cpuSeconds: Double
        public var peakRSSBytes: UInt64
        public var maxLoopLagMilliseconds: Double
        public var droppedArrivals: UInt64
        public var saturated: Bool
        public var saturatedIntervals: Int
        enum CodingKeys: String, CodingKey {
            case cpuSeconds = "cpu_seconds"
            case peakRSSBytes = "peak_rss_bytes"
            case maxLoopLagMilliseconds = "max_loop_lag_ms"
            case droppedArrivals = "dropped_arrivals"
            case saturated
            case saturatedIntervals = "saturated_intervals"
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
    public var accounts: Accounts
    /// Group chat fan-out per room (MUC profiles).
    public var rooms: [String: RoomSummary]
    public var stanzas: [String: UInt64]
    public var errors: [String: UInt64]
    /// Occurrences folded into `-other` keys per label family (`CardinalityCap`); nil when none.
    public var folded: [String: UInt64]?
    /// One example text per error kind, as the server wrote it (`ErrorExamples`); nil when none.
    public var errorExamples: [String: String]?
    /// Failed writes of `intervals.jsonl` (disk full); nil when every write succeeded.
    public var intervalWrites: IntervalWriteFailures?
    public var generator: Generator
    /// Every threshold with its value and pass/fail (absent when the run had none).
    public var thresholds: [ThresholdResult]?
    /// Trend findings (login/message p99, error rate, generator RSS) after the warm-up.
    public var findings: [TrendFinding]?
    /// The run's own verdict (did sessions log in; did the load run as planned).
    public var verdict: RunOutcome?

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
        case messages, bytes, accounts, rooms, stanzas, errors, folded, generator
        case errorExamples = "error_examples"
        case intervalWrites = "interval_writes"
        case thresholds, findings, verdict
    }

    /// Builds the summary from the run's accumulated snapshot and its intervals.
    public init(
        runID: String, profile: String, startedAt: Date, endedAt: Date, stopReason: String,
        total: IntervalSnapshot, healths: [GeneratorHealth], peakConcurrent: Int64, ledger: LedgerCounts
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
            reconnected: total.counter(.sessionsReconnected), churned: total.counter(.sessionsChurned))
        latencyMilliseconds = total.latency.mapValues(Percentiles.init)
        serviceLatencyMilliseconds = total.serviceLatency.mapValues(Percentiles.init)
        messages = Messages(
            sent: total.counter(.messagesSent), received: total.counter(.messagesReceived),
            lost: ledger.lost, duplicated: ledger.duplicated, reordered: ledger.reordered,
            groupchatSent: total.counter(.groupchatSent), groupchatReceived: total.counter(.groupchatReceived))
        bytes = Bytes(sent: total.counter(.bytesSent), received: total.counter(.bytesReceived))
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
        folded = total.folded
        errorExamples = total.errorExamples
        generator = Generator(
            cpuSeconds: healths.reduce(0) { $0 + $1.cpuSeconds },
            peakRSSBytes: healths.map { max($0.rssBytes, $0.peakRSSBytes ?? 0) }.max() ?? 0,
            maxLoopLagMilliseconds: Double(total.loopLag.maxMicroseconds) / 1000,
            droppedArrivals: total.counter(.droppedArrivals),
            saturated: healths.contains { $0.saturated },
            saturatedIntervals: healths.filter(\.saturated).count)
    }
}
