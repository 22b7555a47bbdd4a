import Foundation

/// Parses durations as people write them: `500ms`, `90s`, `2m`, `1h30m`, `1.5s`, or a plain number of
/// seconds. Units: ms, s, m, h, d. Returns nil for anything else (including negative values and more
/// than `maximumSeconds`).
public enum DurationText {
    /// The longest duration accepted: 100 years (a `Duration` in whole nanoseconds holds ~292 years).
    public static let maximumSeconds = 100.0 * 365 * 86400

    public static func parse(_ text: String) -> Duration? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return nil }
        if let seconds = Double(trimmed) {
            return seconds >= 0 && seconds <= maximumSeconds ? .nanoseconds(Int64(seconds * 1e9)) : nil
        }
        var total = 0.0
        var number = ""
        var index = trimmed.startIndex
        var sawUnit = false
        while index < trimmed.endIndex {
            let character = trimmed[index]
            if character.isNumber || character == "." {
                number.append(character)
                index = trimmed.index(after: index)
                continue
            }
            var unit = ""
            while index < trimmed.endIndex, trimmed[index].isLetter {
                unit.append(trimmed[index])
                index = trimmed.index(after: index)
            }
            guard let value = Double(number) else { return nil }
            let scale: Double
            switch unit {
            case "ms": scale = 0.001
            case "s": scale = 1
            case "m": scale = 60
            case "h": scale = 3600
            case "d": scale = 86400
            default: return nil
            }
            total += value * scale
            number = ""
            sawUnit = true
        }
        guard sawUnit, number.isEmpty, total <= maximumSeconds else { return nil }
        return .nanoseconds(Int64(total * 1e9))
    }

    /// `90s`, `2m30s`, `1h`, `250ms` — the shortest exact rendering for messages and `plan`.
    public static func format(_ duration: Duration) -> String {
        let nanos = duration.nanoseconds
        if nanos % 1_000_000_000 != 0 {
            let millis = Double(nanos) / 1e6
            return millis < 1000 ? "\(formatNumber(millis))ms" : "\(formatNumber(millis / 1000))s"
        }
        var seconds = nanos / 1_000_000_000
        if seconds == 0 { return "0s" }
        var result = ""
        if seconds >= 3600 {
            result += "\(seconds / 3600)h"
            seconds %= 3600
        }
        if seconds >= 60 {
            result += "\(seconds / 60)m"
            seconds %= 60
        }
        if seconds > 0 { result += "\(seconds)s" }
        return result
    }

    private static func formatNumber(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%.3g", value)
    }
}
