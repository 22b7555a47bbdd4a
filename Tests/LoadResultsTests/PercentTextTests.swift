// The shared percentage parser: what `capacity --resolution` and `--tolerance` accept and refuse.
import Testing

@testable import LoadResults

@Suite struct PercentTextTests {
    struct Row: Sendable, CustomTestStringConvertible {
        var text: String
        var points = false
        /// nil: refused.
        var parsed: PercentText?
        var testDescription: String { "'\(text)'" + (points ? " (pp allowed)" : "") }
    }

    static let rows: [Row] = [
        Row(text: "5%", parsed: PercentText(number: 5, sign: .percent)),
        Row(text: " 2.5 % ", parsed: PercentText(number: 2.5, sign: .percent)),
        Row(text: "0.05", parsed: PercentText(number: 0.05, sign: .bare)),
        Row(text: "\t10\t", parsed: PercentText(number: 10, sign: .bare)),
        Row(text: "-3%", parsed: PercentText(number: -3, sign: .percent)),
        Row(text: "1pp", points: true, parsed: PercentText(number: 1, sign: .points)),
        Row(text: "0.1 pp", points: true, parsed: PercentText(number: 0.1, sign: .points)),
        Row(text: "1pp", parsed: nil),
        Row(text: "", parsed: nil),
        Row(text: "%", parsed: nil),
        Row(text: "5%%", parsed: nil),
        Row(text: "five%", parsed: nil),
        Row(text: "5ms", points: true, parsed: nil),
        Row(text: "inf%", parsed: nil),
        Row(text: "nan", parsed: nil),
    ]

    @Test(arguments: rows)
    func parses(_ row: Row) {
        #expect(PercentText.parse(row.text, points: row.points) == row.parsed)
    }

    /// `capacity --resolution` reads a bare number as a fraction, `--tolerance` as percent.
    @Test func fractionAndPercentReadingsOfOneText() throws {
        let sign = try #require(PercentText.parse("5%"))
        #expect(sign.fraction == 0.05 && sign.percent == 5)
        let bare = try #require(PercentText.parse("0.05"))
        #expect(bare.fraction == 0.05 && bare.percent == 0.05)
        let points = try #require(PercentText.parse("2pp", points: true))
        #expect(points.percent == 2)
    }

    /// Tolerances go through the same parser: `%`, `pp` and bare numbers are percent; the rest is refused.
    @Test func tolerancesUseIt() throws {
        let tolerances = try Tolerances.parse(["p99=5%", "error_rate=2pp", "p50= 7 "])
        #expect(tolerances.overrides == ["p99": 5, "error_rate": 2, "p50": 7])
        #expect(throws: ToleranceError.self) { try Tolerances.parse(["p99=5%%"]) }
        #expect(throws: ToleranceError.self) { try Tolerances.parse(["p99=-1%"]) }
    }
}
