import Foundation

/// One outage found in a run's intervals (`OutageFinder`): when the online population dropped sharply
/// and/or connection errors spiked, what was lost, the reconnect storm that followed and how long the
/// population took to come back. Times are seconds since the run's start; the rules are in
/// docs/RESULTS.md ("Outages").
///
/// Invariants: `start < end <= stormEnd`; `dropped == max(0, onlineBefore − onlineLowest)`;
/// `recoveredAt` and `timeToRecover` are both nil (not back before the next outage or the load's end)
/// or both set, with `timeToRecover == recoveredAt − start`.
public struct Outage: Sendable, Equatable, Codable {
    /// Start of the first disturbed interval.
    public var start: Double
    /// End of the last disturbed interval.
    public var end: Double
    /// Sessions online at the end of the interval before the outage.
    public var onlineBefore: Int64
    /// The fewest sessions online at any interval end from `start` to `stormEnd`.
    public var onlineLowest: Int64
    public var dropped: Int64
    /// Connection errors (`OutageFinder.isConnectionError`) from `start` to `stormEnd`.
    public var connectionErrors: UInt64
    /// Reconnect attempts and reconnects that logged in again, from `start` to `stormEnd`.
    public var reconnects: UInt64
    public var reconnected: UInt64
    /// `reconnect.login` (each reconnect's login, from the end of its back-off) from `start` to
    /// `stormEnd`; nil when none was timed.
    public var reconnectLogin: RunSummary.Percentiles?
    /// Every login (`login`, from the intended start) from `start` to `stormEnd`; nil when none.
    public var login: RunSummary.Percentiles?
    /// End of the first interval, after the disturbed ones, with at least `OutageFinder.Criteria
    /// .recoveryFraction` of `onlineBefore` online.
    public var recoveredAt: Double?
    /// `recoveredAt − start`.
    public var timeToRecover: Double?
    /// Where the storm's figures stop: `recoveredAt`, else the end of the last interval before the
    /// next outage or the load's end.
    public var stormEnd: Double
    /// Start of the interval before the outage: messages sent from here to `stormEnd` and never
    /// received count as lost in this outage's window (`messagesLost`).
    public var lossWindowStart: Double
    /// Messages never received that were sent in `lossWindowStart`…`stormEnd`; nil when the results
    /// do not say when lost messages were sent.
    public var messagesLost: UInt64?

    enum CodingKeys: String, CodingKey {
        case start = "start_s"
        case end = "end_s"
        case onlineBefore = "online_before"
        case onlineLowest = "online_lowest"
        case dropped
        case connectionErrors = "connection_errors"
        case reconnects, reconnected
        case reconnectLogin = "reconnect_login"
        case login
        case recoveredAt = "recovered_at_s"
        case timeToRecover = "time_to_recover_s"
        case stormEnd = "storm_end_s"
        case lossWindowStart = "loss_window_start_s"
        case messagesLost = "messages_lost"
    }

    /// `12.5–32.5 s: online 2990 → 0 (dropped 2990), …`.
    public var line: String { line(withLoss: true) }

    /// `line`, without the messages lost in the window when `withLoss` is false (one generator of
    /// several cannot tell them).
    public func line(withLoss: Bool) -> String {
        func latency(_ percentiles: RunSummary.Percentiles?) -> String {
            guard let percentiles else { return "–" }
            return "p50 \(TextReport.formatMs(percentiles.p50)) / p99 \(TextReport.formatMs(percentiles.p99)) ms (\(percentiles.count))"
        }
        let recovery = timeToRecover.map { "back to 95 % after \(Self.seconds($0)) s" } ?? "not back before \(Self.seconds(stormEnd)) s"
        return "\(Self.seconds(start))–\(Self.seconds(end)) s: online \(onlineBefore) → \(onlineLowest) (dropped \(dropped)), "
            + "\(connectionErrors) connection errors; storm \(reconnects) reconnects, \(reconnected) logged in again, "
            + "reconnect login \(latency(reconnectLogin)); \(recovery)"
            + ((withLoss ? messagesLost : nil).map { "; \($0) messages lost" } ?? "")
    }

    static func seconds(_ value: Double) -> String { String(format: "%.1f", value) }
}
