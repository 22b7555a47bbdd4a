import ThresholdModel

/// Parses one threshold's text (see `Threshold`): finds the comparison, then reads the subject
/// before it and the bound and optional `over WINDOW` after it, collecting every problem with its
/// column instead of stopping at the first.
struct ThresholdParser {
    let characters: [Character]
    var problems: [ThresholdSyntaxErrors.Problem] = []

    static let example = "e.g. 'login.p99 < 800ms', 'errors.rate < 0.1% over 10m', 'trend(message.p99) < 5%/h'"
    static let groupPrefixes = ["errors", "messages", "sessions", "generator"]

    init(text: String) { characters = Array(text) }

    /// A run of characters and the 1-based column of its first one.
    struct Token {
        var text: String
        var column: Int
    }

    mutating func problem(_ column: Int, _ message: String, hint: String? = nil) {
        problems.append(.init(column: column, message: message, hint: hint))
    }

    mutating func parse() throws(ThresholdSyntaxErrors) -> Threshold {
        let text = String(characters).trimmingWhitespace
        guard !text.isEmpty else {
            throw ThresholdSyntaxErrors(problems: [.init(column: 1, message: "empty threshold", hint: Self.example)])
        }
        guard let operatorIndex = characters.firstIndex(where: { "<>=!".contains($0) }) else {
            throw ThresholdSyntaxErrors(problems: [
                .init(
                    column: characters.count + 1,
                    message: "expected a comparison (<, <=, >, >=, ==, !=)",
                    hint: Self.example)
            ])
        }
        let pair = operatorIndex + 1 < characters.count ? String(characters[operatorIndex...operatorIndex + 1]) : ""
        var comparison = ThresholdComparison.less
        var afterOperator = operatorIndex + 1
        if let two = ThresholdComparison(rawValue: pair) {
            comparison = two
            afterOperator += 1
        } else if let one = ThresholdComparison(rawValue: String(characters[operatorIndex])) {
            comparison = one
        } else {
            problem(operatorIndex + 1, "'\(characters[operatorIndex])' is not a comparison", hint: "write ==, !=, <, <=, > or >=")
        }

        let subject = readSubject(Token(text: String(characters[..<operatorIndex]), column: 1))
        let tokens = Self.words(characters[afterOperator...], firstColumn: afterOperator + 1)
        var bound: (value: Double, unit: VerdictUnit)?
        var window: Double?
        if tokens.isEmpty {
            problem(characters.count + 1, "expected a value after '\(comparison.rawValue)'", hint: Self.example)
        } else if let subject {
            bound = readBound(tokens[0], for: subject.quantity, trend: subject.isTrend)
        }
        if tokens.count > 1 {
            let keyword = tokens[1]
            if keyword.text != "over" {
                problem(keyword.column, "unexpected '\(keyword.text)' after the value", hint: "only 'over WINDOW' may follow, e.g. 'over 10m'")
            } else if subject?.isTrend == true {
                problem(keyword.column, "a trend is judged over the whole run, not 'over' a window")
            } else if tokens.count < 3 {
                problem(keyword.column + 4, "expected a window length after 'over'", hint: "e.g. 'over 10m'")
            } else {
                window = readWindow(tokens[2])
            }
            for extra in tokens.dropFirst(3) {
                problem(extra.column, "unexpected '\(extra.text)' after the window")
            }
        }
        guard problems.isEmpty, let subject, let bound else { throw ThresholdSyntaxErrors(problems: problems) }
        return Threshold(
            quantity: subject.quantity, comparison: comparison, bound: bound.value, unit: bound.unit, window: window,
            isTrend: subject.isTrend, text: text)
    }

    // MARK: - Subject

    mutating func readSubject(_ token: Token) -> (quantity: ThresholdQuantity, isTrend: Bool)? {
        let leading = token.text.prefix { $0 == " " || $0 == "\t" }.count
        let trimmed = token.text.trimmingWhitespace
        let column = token.column + leading
        guard !trimmed.isEmpty else {
            problem(column, "expected a metric before the comparison", hint: Self.example)
            return nil
        }
        if trimmed.hasPrefix("trend(") || trimmed.hasPrefix("trend (") {
            let open = trimmed.firstIndex(of: "(")!
            let innerStart = trimmed.index(after: open)
            guard trimmed.hasSuffix(")") else {
                problem(column + trimmed.count, "expected ')' to close 'trend('")
                return nil
            }
            let inner = String(trimmed[innerStart..<trimmed.index(before: trimmed.endIndex)])
            let innerColumn = column + trimmed.distance(from: trimmed.startIndex, to: innerStart)
            guard let quantity = readQuantity(Token(text: inner, column: innerColumn)) else { return nil }
            guard quantity.hasTrend else {
                problem(
                    innerColumn, "'\(quantity)' has no trend",
                    hint: "trends exist for latency percentiles, errors.rate, sessions.online, generator.rss and generator.cpu")
                return nil
            }
            return (quantity, true)
        }
        return readQuantity(Token(text: trimmed, column: column)).map { ($0, false) }
    }

    mutating func readQuantity(_ token: Token) -> ThresholdQuantity? {
        let name = token.text.trimmingWhitespace
        if let named = ThresholdQuantity.named.first(where: { $0.name == name }) { return named.quantity }
        if name.contains(where: { $0 == " " || $0 == "\t" }) {
            problem(token.column, "'\(name)' is not a metric name", hint: "metric names have no spaces, e.g. login.p99")
            return nil
        }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        if let group = parts.first, Self.groupPrefixes.contains(group) {
            let names = ThresholdQuantity.named.map(\.name)
            problem(
                token.column, "unknown measure '\(name)'",
                hint: ProfileDecoder.closest(to: name, in: names).map { "did you mean '\($0)'?" } ?? "one of \(names.joined(separator: ", "))")
            return nil
        }
        guard parts.count >= 2, parts.allSatisfy({ !$0.isEmpty }) else {
            problem(
                token.column, "expected METRIC.STAT, got '\(name)'",
                hint: "e.g. login.p99, login.sasl.p90, message.max, or one of \(ThresholdQuantity.named.map(\.name).joined(separator: ", "))")
            return nil
        }
        let statisticText = parts.last!
        let metric = parts.dropLast().joined(separator: ".")
        guard metric.allSatisfy({ $0.isLetter || $0.isNumber || "._-".contains($0) }) else {
            problem(token.column, "'\(metric)' is not a metric name", hint: "letters, digits, '.', '_' and '-'")
            return nil
        }
        guard let statistic = LatencyStatistic(rawValue: statisticText) else {
            let names = LatencyStatistic.allCases.map(\.rawValue)
            problem(
                token.column + metric.count + 1, "unknown statistic '\(statisticText)'",
                hint: ProfileDecoder.closest(to: statisticText, in: names).map { "did you mean '\($0)'?" }
                    ?? "one of \(names.joined(separator: ", "))")
            return nil
        }
        return .latency(metric: metric, statistic: statistic)
    }

    // MARK: - Bound and window

    /// Units as written → canonical unit and the factor into it.
    static let units: [(suffix: String, unit: VerdictUnit, factor: Double)] = [
        ("ms", .milliseconds, 1), ("s", .milliseconds, 1000), ("%/h", .fractionPerHour, 0.01), ("%", .fraction, 0.01),
        ("/s", .perSecond, 1), ("B", .bytes, 1), ("KB", .bytes, 1e3), ("MB", .bytes, 1e6), ("GB", .bytes, 1e9),
        ("KiB", .bytes, 1024), ("MiB", .bytes, 1_048_576), ("GiB", .bytes, 1_073_741_824),
    ]

    mutating func readBound(_ token: Token, for quantity: ThresholdQuantity, trend: Bool) -> (value: Double, unit: VerdictUnit)? {
        let numberText = String(token.text.prefix { $0.isNumber || $0 == "." || $0 == "-" || $0 == "+" })
        let suffix = String(token.text.dropFirst(numberText.count))
        guard let number = Double(numberText), number.isFinite else {
            problem(token.column, "'\(token.text)' is not a number", hint: Self.example)
            return nil
        }
        let allowed: [VerdictUnit] = trend ? [.fractionPerHour] : quantity.allowedUnits
        var unit: VerdictUnit
        var factor = 1.0
        if suffix.isEmpty {
            guard let plain = allowed.first(where: { $0 == .count || $0 == .perSecond || $0 == .bytes }) else {
                problem(token.column + numberText.count, "'\(token.text)' needs a unit", hint: Self.unitHint(allowed))
                return nil
            }
            unit = plain
        } else if let known = Self.units.first(where: { $0.suffix == suffix }) {
            unit = known.unit
            factor = known.factor
        } else {
            problem(token.column + numberText.count, "unknown unit '\(suffix)'", hint: Self.unitHint(allowed))
            return nil
        }
        guard allowed.contains(unit) else {
            problem(
                token.column + numberText.count, "'\(suffix)' does not fit \(trend ? "trend(\(quantity))" : "\(quantity)")",
                hint: Self.unitHint(allowed))
            return nil
        }
        if !trend && number < 0 {
            problem(token.column, "\(quantity) cannot be negative, got \(numberText)")
            return nil
        }
        return (number * factor, unit)
    }

    static func unitHint(_ allowed: [VerdictUnit]) -> String {
        "write "
            + allowed.map { unit in
                switch unit {
                case .milliseconds: return "a duration such as 800ms or 1.5s"
                case .count: return "a plain number"
                case .fraction: return "a percentage such as 0.1%"
                case .perSecond: return "a rate such as 50/s"
                case .bytes: return "a size such as 512MB or 2GiB"
                case .fractionPerHour: return "a relative slope such as 5%/h"
                }
            }.joined(separator: " or ")
    }

    mutating func readWindow(_ token: Token) -> Double? {
        guard let duration = DurationText.parse(token.text) else {
            problem(token.column, "'\(token.text)' is not a duration", hint: "write e.g. 30s, 10m, 1h")
            return nil
        }
        guard duration > .zero else {
            problem(token.column, "the window must be longer than zero")
            return nil
        }
        return Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Splits on spaces and tabs, keeping each word's 1-based column.
    static func words(_ slice: ArraySlice<Character>, firstColumn: Int) -> [Token] {
        var tokens: [Token] = []
        var current = ""
        var start = 0
        for (offset, character) in slice.enumerated() {
            if character == " " || character == "\t" {
                if !current.isEmpty { tokens.append(Token(text: current, column: firstColumn + start)) }
                current = ""
            } else {
                if current.isEmpty { start = offset }
                current.append(character)
            }
        }
        if !current.isEmpty { tokens.append(Token(text: current, column: firstColumn + start)) }
        return tokens
    }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    var trimmingWhitespace: String {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isBlank($0) }), let last = lastIndex(where: { !isBlank($0) }) else { return "" }
        return String(self[first...last])
    }
}
