import ArgumentParser
import Foundation
import LoadResults

/// `xmppload report DIR...`: merges results directories (several generators of one run: histograms
/// and counters add), prints the text report and writes the self-contained HTML report.
struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Merge results directories and print a text report; write an HTML report.",
        discussion: """
            Examples:
              xmppload report results/chat-1
              xmppload report results/gen-0 results/gen-1 --html merged.html
              xmppload report results/chat-1 --json > merged-summary.json
            With one directory the HTML report goes to DIR/report.html unless --html is given; with several,
            --html names the file (default: report.html in the current directory).
            """
    )

    @Argument(help: "Results directories (each with intervals.jsonl).")
    var directories: [String]

    @Option(help: "Where to write the HTML report.")
    var html: String?

    @Flag(help: "Print the merged result as JSON in summary.json's schema instead of the text report.")
    var json = false

    func run() throws {
        // A capacity search's directory: its table and report.html (its steps are runs under steps/).
        let searches = directories.compactMap { CapacityResult.read(from: ResultsDirectory(path: $0)) }
        if !searches.isEmpty {
            var capacity = searches[0]
            if directories.count > 1 {
                // The generators of one ladder (`capacity --segment`): their steps merged and judged again.
                do { capacity = try CapacityReport.merge(directories: directories, searches: searches) } catch {
                    FileHandle.standardError.write(Data("xmppload report: \(error)\n".utf8))
                    throw ExitCode(ExitStatus.usage.rawValue)
                }
            }
            let htmlPath = html ?? (directories.count == 1 ? ResultsDirectory(path: directories[0]).file(ResultsDirectory.reportFile) : "report.html")
            try Data(capacity.html(title: (directories[0] as NSString).lastPathComponent).utf8).write(
                to: URL(fileURLWithPath: htmlPath), options: .atomic)
            if json {
                Console.print(String(decoding: try capacity.summaryFile(), as: UTF8.self))
                return
            }
            Console.print(capacity.table() + capacity.headline)
            for note in capacity.notes { Console.print("note: \(note)") }
            Console.print("steps: xmppload report \(directories[0])/steps/NN-…\nhtml report: \(htmlPath)")
            if capacity.kind == "generator-limited" { throw ExitCode(ExitStatus.notComparable.rawValue) }
            return
        }
        let results: MergedResults
        do { results = try MergedResults.load(directories: directories) } catch {
            FileHandle.standardError.write(Data("xmppload report: \(error)\n".utf8))
            throw ExitCode(ExitStatus.usage.rawValue)
        }
        if let problem = results.ledgerProblem {
            FileHandle.standardError.write(Data("xmppload report: messages not reconciled across generators: \(problem)\n".utf8))
        }
        let htmlPath = html ?? (directories.count == 1 ? ResultsDirectory(path: directories[0]).file(ResultsDirectory.reportFile) : "report.html")
        try Data(HTMLReport.render(results).utf8).write(to: URL(fileURLWithPath: htmlPath), options: .atomic)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            encoder.dateEncodingStrategy = .iso8601
            Console.print(String(decoding: try encoder.encode(results.summary), as: UTF8.self))
        } else {
            Console.print(TextReport.render(results), terminator: "")
            if let line = Self.reconciliationLine(results) { Console.print(line) }
            if let line = Self.clockLine(results) { Console.print(line) }
            Console.print("html report: \(htmlPath)")
        }
    }

    /// With several generators of one run (a `--segment` run, or generators sharing a `--run-id`):
    /// what the reconciled ledger says (chat messages sent, delivered to any generator, crossing
    /// generators, lost); nil otherwise.
    static func reconciliationLine(_ results: MergedResults) -> String? {
        guard results.directories.count > 1, let ledger = results.summary.ledger, ledger.segmentCount > 1 else { return nil }
        let covered = ledger.segments.map(String.init).joined(separator: ",")
        let who =
            ledger.generators.map { "generators \($0.count) sharing run id \(results.summary.runID)" }
            ?? "generators segments \(covered) of \(ledger.segmentCount)"
        var line =
            "\(who): chat sent \(ledger.segments.reduce(0) { $0 + ledger.sent[$1] })"
            + "  delivered \(ledger.delivered) (\(ledger.crossed) across generators)  lost \(ledger.lost)"
        if ledger.receivedFromUncovered > 0 {
            line += "  received from segments not given \(ledger.receivedFromUncovered)"
        }
        return line
    }

    /// With several generators: each one's clock offset against the server (XEP-0202) with its
    /// uncertainty, and the uncertainty a latency between two of them carries (the two largest
    /// uncertainties added); nil when fewer than two directories or no generator measured its clock.
    static func clockLine(_ results: MergedResults) -> String? {
        guard results.directories.count > 1, !results.clocks.isEmpty else { return nil }
        func ms(_ value: Double) -> String { String(format: "%.1f", value) }
        let each = results.clocks.sorted { $0.key < $1.key }.map {
            "\($0.key) \(ms($0.value.offsetMilliseconds)) ± \(ms($0.value.uncertaintyMilliseconds)) ms"
        }
        let largest = results.clocks.values.map(\.uncertaintyMilliseconds).sorted(by: >)
        let across =
            largest.count >= 2 && results.clocks.count == results.directories.count
            ? "± \(ms(largest[0] + largest[1])) ms" : "unknown (not every generator measured its clock)"
        return "clocks vs server (XEP-0202): \(each.joined(separator: ", ")); clock uncertainty of a latency across generators \(across)"
    }
}
