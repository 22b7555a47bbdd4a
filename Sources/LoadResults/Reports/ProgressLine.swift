import Foundation

/// One console line per interval: elapsed time, sessions online, logins/s, messages/s, login and
/// message p99, errors and dropped arrivals — the numbers to watch while a run goes.
public enum ProgressLine {
    public static func render(interval: IntervalSnapshot, elapsed: Double, planned: Double?) -> String {
        let seconds = max(interval.end - interval.start, 0.001)
        let logins = Double(interval.successfulLogins) / seconds
        let messages = Double(interval.counter(.messagesReceived) + interval.counter(.groupchatReceived)) / seconds
        func percentiles(_ metric: String) -> String {
            guard let histogram = interval.latency[metric] else { return "-" }
            return "\(TextReport.formatMs(histogram.milliseconds(atPercentile: 50)))/\(TextReport.formatMs(histogram.milliseconds(atPercentile: 99)))"
        }
        let loginP99 = percentiles("login")
        let messageP99 = percentiles(interval.latency["message"] == nil && interval.latency["muc.message"] != nil ? "muc.message" : "message")
        let time = planned.map { String(format: "%5.0fs/%.0fs", elapsed, $0) } ?? String(format: "%5.0fs", elapsed)
        var text =
            "\(time)  online \(interval.gauge("sessions_online"))  connecting \(interval.gauge("sessions_connecting"))"
            + String(format: "  logins/s %.1f  msgs/s %.1f", logins, messages)
            + "  login p50/p99 \(loginP99) ms  msg p50/p99 \(messageP99) ms  errors \(interval.errorCount)"
        if interval.counter(.droppedArrivals) > 0 { text += "  dropped \(interval.counter(.droppedArrivals))" }
        if interval.health?.saturated == true { text += "  [GENERATOR SATURATED]" }
        return text
    }
}
