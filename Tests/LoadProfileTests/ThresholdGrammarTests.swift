import LoadResults
import Testing

@testable import LoadProfile

/// The threshold language: every accepted form parses into the expected typed value, and every
/// kind of mistake is reported with its column (all problems of one text at once).
@Suite struct ThresholdGrammarTests {
    struct Valid: Sendable, CustomTestStringConvertible {
        var text: String
        var quantity: ThresholdQuantity
        var comparison: ThresholdComparison
        var bound: Double
        var unit: VerdictUnit
        var window: Double? = nil
        var trend = false
        var testDescription: String { text }
    }

    static let valid: [Valid] = [
        Valid(text: "login.p99 < 800ms", quantity: .latency(metric: "login", statistic: .p99), comparison: .less, bound: 800, unit: .milliseconds),
        Valid(text: "login.p99<1.5s", quantity: .latency(metric: "login", statistic: .p99), comparison: .less, bound: 1500, unit: .milliseconds),
        Valid(
            text: "  login.sasl.p90 <= 20ms  ", quantity: .latency(metric: "login.sasl", statistic: .p90), comparison: .lessOrEqual, bound: 20,
            unit: .milliseconds),
        Valid(
            text: "muc.message.p999 < 2s over 10m", quantity: .latency(metric: "muc.message", statistic: .p999), comparison: .less, bound: 2000,
            unit: .milliseconds, window: 600),
        Valid(text: "message.max < 5s", quantity: .latency(metric: "message", statistic: .max), comparison: .less, bound: 5000, unit: .milliseconds),
        Valid(
            text: "roster-get.p50 < 10ms", quantity: .latency(metric: "roster-get", statistic: .p50), comparison: .less, bound: 10,
            unit: .milliseconds),
        Valid(
            text: "login.count >= 1000", quantity: .latency(metric: "login", statistic: .count), comparison: .greaterOrEqual, bound: 1000,
            unit: .count),
        Valid(text: "login.rate > 50/s", quantity: .latency(metric: "login", statistic: .rate), comparison: .greater, bound: 50, unit: .perSecond),
        Valid(text: "login.rate > 50", quantity: .latency(metric: "login", statistic: .rate), comparison: .greater, bound: 50, unit: .perSecond),
        Valid(text: "errors.rate < 0.1%", quantity: .errorsRate, comparison: .less, bound: 0.001, unit: .fraction),
        Valid(text: "errors.rate < 1% over 30s", quantity: .errorsRate, comparison: .less, bound: 0.01, unit: .fraction, window: 30),
        Valid(text: "errors.count == 0", quantity: .errorsCount, comparison: .equal, bound: 0, unit: .count),
        Valid(text: "messages.lost == 0", quantity: .messagesLost, comparison: .equal, bound: 0, unit: .count),
        Valid(text: "messages.loss < 0.01%", quantity: .messagesLoss, comparison: .less, bound: 0.0001, unit: .fraction),
        Valid(text: "sessions.online >= 95%", quantity: .sessionsOnline, comparison: .greaterOrEqual, bound: 0.95, unit: .fraction),
        Valid(text: "sessions.online >= 1900", quantity: .sessionsOnline, comparison: .greaterOrEqual, bound: 1900, unit: .count),
        Valid(text: "sessions.failed != 3", quantity: .sessionsFailed, comparison: .notEqual, bound: 3, unit: .count),
        Valid(text: "generator.rss < 512MB", quantity: .generatorRSS, comparison: .less, bound: 512e6, unit: .bytes),
        Valid(text: "generator.rss < 2GiB", quantity: .generatorRSS, comparison: .less, bound: 2 * 1_073_741_824, unit: .bytes),
        Valid(text: "generator.cpu < 90%", quantity: .generatorCPU, comparison: .less, bound: 0.9, unit: .fraction),
        Valid(text: "dropped_arrivals == 0", quantity: .droppedArrivals, comparison: .equal, bound: 0, unit: .count),
        Valid(
            text: "trend(message.p99) < 5%/h", quantity: .latency(metric: "message", statistic: .p99), comparison: .less, bound: 0.05,
            unit: .fractionPerHour, trend: true),
        Valid(
            text: "trend(generator.rss) <= 1%/h", quantity: .generatorRSS, comparison: .lessOrEqual, bound: 0.01, unit: .fractionPerHour, trend: true),
        Valid(text: "trend(errors.rate) > -10%/h", quantity: .errorsRate, comparison: .greater, bound: -0.1, unit: .fractionPerHour, trend: true),
    ]

    @Test(arguments: valid)
    func parses(_ row: Valid) throws {
        let threshold = try Threshold.parse(row.text)
        #expect(threshold.quantity == row.quantity)
        #expect(threshold.comparison == row.comparison)
        #expect(abs(threshold.bound - row.bound) < 1e-9 * max(1, abs(row.bound)))
        #expect(threshold.unit == row.unit)
        #expect(threshold.window == row.window)
        #expect(threshold.isTrend == row.trend)
        #expect(threshold.text == row.text.trimmingWhitespace)
    }

    struct Invalid: Sendable, CustomTestStringConvertible {
        var text: String
        /// (column, a part of the message) for every problem, in order.
        var problems: [(Int, String)]
        var testDescription: String { text }
    }

    static let invalid: [Invalid] = [
        Invalid(text: "", problems: [(1, "empty threshold")]),
        Invalid(text: "   ", problems: [(1, "empty threshold")]),
        Invalid(text: "login.p99 800ms", problems: [(16, "expected a comparison")]),
        Invalid(text: "login.p99 = 800ms", problems: [(11, "'=' is not a comparison")]),
        Invalid(text: " < 800ms", problems: [(2, "expected a metric before the comparison")]),
        Invalid(text: "login.p98 < 800ms", problems: [(7, "unknown statistic 'p98'")]),
        Invalid(text: "login < 800ms", problems: [(1, "expected METRIC.STAT, got 'login'")]),
        Invalid(text: "login..p99 < 1s", problems: [(1, "expected METRIC.STAT")]),
        Invalid(text: "errors.rat < 1%", problems: [(1, "unknown measure 'errors.rat'")]),
        Invalid(text: "sessions.onlin >= 95%", problems: [(1, "unknown measure 'sessions.onlin'")]),
        Invalid(text: "log in.p99 < 1s", problems: [(1, "is not a metric name")]),
        Invalid(text: "login.p99 <", problems: [(12, "expected a value after '<'")]),
        Invalid(text: "login.p99 < fast", problems: [(13, "'fast' is not a number")]),
        Invalid(text: "login.p99 < 800", problems: [(16, "'800' needs a unit")]),
        Invalid(text: "login.p99 < 800 ms", problems: [(16, "'800' needs a unit"), (17, "unexpected 'ms' after the value")]),
        Invalid(text: "login.p99 < 800xs", problems: [(16, "unknown unit 'xs'")]),
        Invalid(text: "login.p99 < 80%", problems: [(15, "'%' does not fit login.p99")]),
        Invalid(text: "errors.rate < 0.1", problems: [(18, "'0.1' needs a unit")]),
        Invalid(text: "messages.lost == 0ms", problems: [(19, "'ms' does not fit messages.lost")]),
        Invalid(text: "login.p99 < -5ms", problems: [(13, "cannot be negative")]),
        Invalid(text: "login.p99 < 1s during 10m", problems: [(16, "unexpected 'during'")]),
        Invalid(text: "login.p99 < 1s over", problems: [(20, "expected a window length after 'over'")]),
        Invalid(text: "login.p99 < 1s over soon", problems: [(21, "'soon' is not a duration")]),
        Invalid(text: "login.p99 < 1s over 0s", problems: [(21, "the window must be longer than zero")]),
        Invalid(text: "login.p99 < 1s over 10m please", problems: [(25, "unexpected 'please' after the window")]),
        Invalid(text: "trend(message.p99 < 5%/h", problems: [(18, "expected ')' to close 'trend('")]),
        Invalid(text: "trend(messages.lost) < 5%/h", problems: [(7, "'messages.lost' has no trend")]),
        Invalid(text: "trend(login.count) < 5%/h", problems: [(7, "'login.count' has no trend")]),
        Invalid(text: "trend(message.p99) < 5ms", problems: [(23, "'ms' does not fit trend(message.p99)")]),
        Invalid(text: "trend(message.p99) < 5%/h over 1h", problems: [(27, "a trend is judged over the whole run")]),
        // Several problems in one text are all reported.
        Invalid(
            text: "login.p98 = 800 over soon",
            problems: [(11, "'=' is not a comparison"), (7, "unknown statistic 'p98'"), (22, "'soon' is not a duration")]),
    ]

    @Test(arguments: invalid)
    func reportsEveryProblemWithItsColumn(_ row: Invalid) {
        do {
            let threshold = try Threshold.parse(row.text)
            Issue.record("parsed as \(threshold)")
        } catch {
            #expect(error.problems.map(\.column) == row.problems.map(\.0), "\(error.problems)")
            for (problem, expected) in zip(error.problems, row.problems) {
                #expect(problem.message.contains(expected.1), "\(problem.message)")
            }
        }
    }

    @Test func comparisonsHold() {
        #expect(ThresholdComparison.less.holds(1, 2) && !ThresholdComparison.less.holds(2, 2))
        #expect(ThresholdComparison.lessOrEqual.holds(2, 2) && !ThresholdComparison.lessOrEqual.holds(3, 2))
        #expect(ThresholdComparison.greater.holds(3, 2) && !ThresholdComparison.greater.holds(2, 2))
        #expect(ThresholdComparison.greaterOrEqual.holds(2, 2) && !ThresholdComparison.greaterOrEqual.holds(1, 2))
        #expect(ThresholdComparison.equal.holds(0, 0) && !ThresholdComparison.equal.holds(1, 0))
        #expect(ThresholdComparison.notEqual.holds(1, 0) && !ThresholdComparison.notEqual.holds(0, 0))
    }

    @Test func profileThresholdsDecodeAndProblemsCarryFileLineColumn() throws {
        let good = try ProfileLoader.load(
            yaml: """
                name: soak
                steps: [login, logout]
                thresholds:
                  - login.p99 < 800ms
                  - 'errors.rate < 0.1% over 10m'
                """, file: "soak.yaml")
        #expect(good.thresholds.map(\.text) == ["login.p99 < 800ms", "errors.rate < 0.1% over 10m"])
        #expect(good.thresholds[1].window == 600)
        do {
            _ = try ProfileLoader.load(
                yaml: """
                    name: soak
                    steps: [login, logout]
                    thresholds:
                      - login.p98 < 800ms
                      - "messages.lost == 0 over soon"
                      - {a: b}
                    """, file: "soak.yaml")
            Issue.record("loaded")
        } catch {
            let lines = error.problems.map { "\($0.location): \($0.message)" }
            #expect(
                lines == [
                    "soak.yaml:4:11: threshold 'login.p98 < 800ms': unknown statistic 'p98'",
                    "soak.yaml:5:30: threshold 'messages.lost == 0 over soon': 'soon' is not a duration",
                    "soak.yaml:6:5: each threshold is one line of text",
                ], "\(lines)")
        }
        do {
            _ = try ProfileLoader.load(yaml: "name: x\nsteps: [login]\nthresholds: login.p99 < 1s\n", file: "x.yaml")
            Issue.record("loaded")
        } catch {
            #expect(error.problems.map(\.message) == ["thresholds must be a list"])
        }
    }

    /// A threshold on a metric the run cannot record (a typo) is a problem when the profile is
    /// read, at the threshold's file:line:column, with a did-you-mean — never a rule judged `no-data`.
    @Test func unknownMetricsAreProblemsWithADidYouMean() throws {
        do {
            _ = try ProfileLoader.load(
                yaml: """
                    name: soak
                    steps:
                      - login
                      - roster: get
                      - repeat: {count: 2, steps: [ping]}
                      - logout
                    thresholds:
                      - logn.p99 < 500ms
                      - 'trend(mesage.p99) < 5%/h'
                      - roster.get.p90 < 1s
                      - iq.ping.p99 < 1s
                      - login.sasl.p99 < 1s
                      - errors.rate < 1%
                    """, file: "soak.yaml")
            Issue.record("loaded")
        } catch {
            let lines = error.problems.map { "\($0.location): \($0.message)" }
            #expect(
                lines == [
                    "soak.yaml:8:5: threshold 'logn.p99 < 500ms': unknown metric 'logn'",
                    "soak.yaml:9:6: threshold 'trend(mesage.p99) < 5%/h': unknown metric 'mesage'",
                ], "\(lines)")
            #expect(error.problems.first?.hint?.hasPrefix("did you mean 'login'?") == true)
            #expect(error.problems.last?.hint?.hasPrefix("did you mean 'message'?") == true)
        }
    }

    @Test func theCatalogHoldsTheEngineMetricsAndEveryStepName() throws {
        let definition = try ProfileLoader.load(
            yaml: "name: x\nsteps: [login, {roster: get}, {choose: [{weight: 1, steps: [ping]}]}, logout]\n", file: "x.yaml")
        let catalog = MetricCatalog(definition)
        for name in ["login", "login.connect", "login.bind", "message", "keepalive.ping", "bosh.poll", "roster.get", "iq.ping"] {
            #expect(catalog.names.contains(name), "\(name)")
        }
        #expect(catalog.problem(with: try Threshold.parse("login.p99 < 1s")) == nil)
        #expect(catalog.problem(with: try Threshold.parse("errors.rate < 1%")) == nil)
        #expect(catalog.problem(with: try Threshold.parse("logn.p99 < 1s"))?.hint.hasPrefix("did you mean 'login'?") == true)
        #expect(catalog.problem(with: try Threshold.parse("zzzzzz.p99 < 1s"))?.hint.hasPrefix("known metrics: ") == true)
    }
}
