import Foundation
import Testing

@testable import LoadResults

/// The outage finder over plain interval tables: 5-second intervals, sessions online at each end,
/// connection errors and reconnects per interval.
@Suite struct OutageFinderTests {
    /// One row of a run: online at the interval's end, connection errors, reconnects (attempts and
    /// logged in again) and the reconnect logins' durations in milliseconds.
    struct Row {
        var online: Int64
        var errors: UInt64 = 0
        var errorKind = "connect-refused"
        var reconnects: UInt64 = 0
        var reconnected: UInt64 = 0
        var reconnectLoginsMs: [UInt64] = []
    }

    static func intervals(_ rows: [Row]) -> [IntervalSnapshot] {
        rows.enumerated().map { index, row in
            var snapshot = IntervalSnapshot(start: Double(index) * 5, end: Double(index + 1) * 5)
            snapshot.gauges[SessionGauge.online.name] = row.online
            if row.errors > 0 { snapshot.errors[row.errorKind] = row.errors }
            if row.reconnects > 0 { snapshot.counters[Counter.sessionsReconnects.name] = row.reconnects }
            if row.reconnected > 0 { snapshot.counters[Counter.sessionsReconnected.name] = row.reconnected }
            if !row.reconnectLoginsMs.isEmpty {
                var histogram = LatencyHistogram()
                for milliseconds in row.reconnectLoginsMs { histogram.record(microseconds: milliseconds * 1000) }
                snapshot.latency[OutageFinder.reconnectLoginMetric] = histogram
                snapshot.latency["login"] = histogram
            }
            return snapshot
        }
    }

    static func find(_ rows: [Row], loadEnd: Double? = nil, losses: [MessageLossBucket]? = nil) -> [Outage] {
        var finder = OutageFinder(loadEnd: loadEnd)
        for interval in intervals(rows) { finder.add(interval) }
        return finder.outages(losses: losses)
    }

    static func online(_ values: Int64...) -> [Row] { values.map { Row(online: $0) } }

    /// What a case expects of each outage: window, dropped, time to recover (nil: not back).
    struct Expected: Equatable, CustomStringConvertible {
        var start: Double
        var end: Double
        var dropped: Int64
        var timeToRecover: Double?
        var description: String { "\(start)–\(end) dropped \(dropped) recover \(timeToRecover.map { "\($0)" } ?? "nil")" }
    }

    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var rows: [Row]
        var loadEnd: Double?
        var expected: [Expected]
        var testDescription: String { name }
    }

    static let restart: [Row] = [
        Row(online: 100), Row(online: 100), Row(online: 100),
        Row(online: 0, errors: 100, errorKind: "stream-system-shutdown"),  // 15–20: the server stops
        Row(online: 0, errors: 180, reconnects: 180),  // 20–25: refused while down
        Row(online: 0, errors: 150, reconnects: 150),  // 25–30
        Row(online: 70, errors: 2, reconnects: 90, reconnected: 70, reconnectLoginsMs: [40, 80, 900]),  // 30–35: back
        Row(online: 94, reconnects: 24, reconnected: 24, reconnectLoginsMs: [60]),  // 35–40: 94 % — not yet
        Row(online: 99, reconnects: 5, reconnected: 5, reconnectLoginsMs: [30]),  // 40–45: recovered
        Row(online: 100), Row(online: 100),
    ]

    static let cases: [Case] = [
        Case(name: "steady population, no errors", rows: online(100, 100, 100, 100, 100, 100), expected: []),
        Case(name: "ramp up then steady", rows: online(0, 20, 50, 80, 100, 100, 100), expected: []),
        Case(
            name: "churn: small dips and a few errors are not an outage",
            rows: [Row(online: 100), Row(online: 95, errors: 4), Row(online: 100, errors: 2), Row(online: 92), Row(online: 100)],
            expected: []),
        Case(
            name: "a server restart: drop, refused reconnects, storm, recovery at 95 %",
            rows: restart, expected: [Expected(start: 15, end: 30, dropped: 100, timeToRecover: 30)]),
        Case(
            name: "two restarts",
            rows: restart + restart.dropFirst(3),
            expected: [
                Expected(start: 15, end: 30, dropped: 100, timeToRecover: 30),
                Expected(start: 55, end: 70, dropped: 100, timeToRecover: 30),
            ]),
        Case(
            name: "an error spike without a drop recovers in the next interval",
            rows: [Row(online: 100), Row(online: 100, errors: 10, errorKind: "connect-timeout"), Row(online: 100), Row(online: 100)],
            expected: [Expected(start: 5, end: 10, dropped: 0, timeToRecover: 10)]),
        Case(
            name: "connect errors while the population grows (a ramp under load) are no outage",
            rows: [Row(online: 100), Row(online: 300, errors: 70, errorKind: "connect-timeout"), Row(online: 450, errors: 90), Row(online: 500)],
            expected: []),
        Case(
            name: "errors that are not connection errors are no outage",
            rows: [Row(online: 100), Row(online: 100, errors: 50, errorKind: "message-service-unavailable"), Row(online: 100)],
            expected: []),
        Case(
            name: "a quiet interval inside the outage (back-off) does not split it",
            rows: [Row(online: 100), Row(online: 0, errors: 100), Row(online: 0), Row(online: 0, errors: 20), Row(online: 100)],
            expected: [Expected(start: 5, end: 20, dropped: 100, timeToRecover: 20)]),
        Case(
            name: "reconnect logins timing out while the population comes back are the generator's timeouts, not more outage",
            rows: [
                Row(online: 100), Row(online: 0, errors: 100), Row(online: 50), Row(online: 60),
                Row(online: 70, errors: 20, errorKind: "timeout-login"),
                Row(online: 99),
            ],
            expected: [Expected(start: 5, end: 10, dropped: 100, timeToRecover: 25)]),
        Case(
            name: "planned logouts: online falls to 0 without an error (no planned end known)",
            rows: online(20, 20, 20, 0, 0), expected: []),
        Case(
            name: "the run's own step timeouts end every session: not the server's outage",
            rows: [Row(online: 20), Row(online: 20), Row(online: 0, errors: 20, errorKind: "timeout-presence"), Row(online: 0)],
            expected: []),
        Case(
            name: "login timeouts alone are no outage",
            rows: [Row(online: 100), Row(online: 100, errors: 40, errorKind: "timeout-login"), Row(online: 100)],
            expected: []),
        Case(
            name: "a fall only partly explained by drops (most sessions logged out as planned) is no outage",
            rows: [Row(online: 100), Row(online: 0, errors: 2, errorKind: "connection-reset"), Row(online: 0)],
            expected: []),
        Case(
            name: "the server drops every session: an outage",
            rows: [Row(online: 20), Row(online: 0, errors: 20, errorKind: "connection-reset"), Row(online: 0), Row(online: 20)],
            expected: [Expected(start: 5, end: 10, dropped: 20, timeToRecover: 15)]),
        Case(
            name: "not back before the load ends",
            rows: [Row(online: 100), Row(online: 100), Row(online: 10, errors: 90), Row(online: 50), Row(online: 60)],
            expected: [Expected(start: 10, end: 15, dropped: 90, timeToRecover: nil)]),
        Case(
            name: "the final log-out after the load's end is not an outage",
            rows: online(100, 100, 100, 100, 0, 0), loadEnd: 20, expected: []),
        Case(
            name: "a second drop before recovery starts a new outage",
            rows: [
                Row(online: 100), Row(online: 10, errors: 90), Row(online: 40), Row(online: 60), Row(online: 70),
                Row(online: 5, errors: 65), Row(online: 100),
            ],
            expected: [
                Expected(start: 5, end: 10, dropped: 90, timeToRecover: nil),
                Expected(start: 25, end: 30, dropped: 65, timeToRecover: 10),
            ]),
    ]

    @Test(arguments: cases)
    func findsOutages(_ testCase: Case) {
        let found = Self.find(testCase.rows, loadEnd: testCase.loadEnd).map {
            Expected(start: $0.start, end: $0.end, dropped: $0.dropped, timeToRecover: $0.timeToRecover)
        }
        #expect(found == testCase.expected)
    }

    /// The storm's figures add up over the outage's intervals until it recovered.
    @Test func reconnectStormIsMeasuredUntilRecovery() throws {
        let outage = try #require(Self.find(Self.restart).first)
        #expect(outage.onlineBefore == 100 && outage.onlineLowest == 0)
        #expect(outage.connectionErrors == 100 + 180 + 150 + 2)
        #expect(outage.reconnects == 180 + 150 + 90 + 24 + 5)
        #expect(outage.reconnected == 70 + 24 + 5)
        #expect(outage.recoveredAt == 45 && outage.stormEnd == 45 && outage.lossWindowStart == 10)
        let login = try #require(outage.reconnectLogin)
        #expect(login.count == 5)
        #expect(abs(login.p50 - 60) < 0.1)
        #expect(abs(login.p99 - 900) < 1)
        #expect(outage.login?.count == 5)
        #expect(outage.messagesLost == nil)
    }

    /// Lost messages count in the outage whose window (from the interval before it to its recovery)
    /// holds the interval they were sent in; the rest are outside.
    @Test func lostMessagesInsideAndOutsideTheWindows() throws {
        let losses = [
            MessageLossBucket(start: 0, end: 5, lost: 1),  // before: outside
            MessageLossBucket(start: 10, end: 15, lost: 4),  // in flight when the server stopped: inside
            MessageLossBucket(start: 20, end: 25, lost: 7),  // while down: inside
            MessageLossBucket(start: 40, end: 45, lost: 2),  // the recovering interval: inside
            MessageLossBucket(start: 45, end: 50, lost: 3),  // after: outside
        ]
        let outages = Self.find(Self.restart, losses: losses)
        #expect(outages.map(\.messagesLost) == [13])
        let split = try #require(OutageFinder.split(outages: outages, losses: losses, totalLost: 17))
        #expect(split.inOutages == 13 && split.outside == 4)
        #expect(split.outsideBuckets.map(\.start) == [0, 45])
        #expect(OutageFinder.split(outages: outages, losses: nil, totalLost: 17) == nil)
        // The load stopped at 45 s: the last bucket was sent during the final log-out.
        let ended = try #require(OutageFinder.split(outages: outages, losses: losses, totalLost: 17, loadEnd: 45))
        #expect(ended.inOutages == 13 && ended.outside == 1 && ended.afterLoad == 3 && ended.outsideBuckets.map(\.start) == [0])
    }

    @Test(arguments: [
        ("connect-refused", true), ("connect-timeout", true), ("connection-reset", true), ("connection-closed", true),
        ("stream-system-shutdown", true), ("tls", true), ("timeout-keepalive", false), ("timeout-login", false),
        ("reconnect-abandoned", false), ("timeout-presence", false),
        ("sasl-not-authorized", false), ("message-service-unavailable", false), ("timeout-roster.get", false),
    ])
    func connectionErrorKinds(kind: String, counts: Bool) {
        #expect(OutageFinder.isConnectionError(kind) == counts)
    }
}
