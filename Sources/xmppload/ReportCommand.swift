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
        let results: MergedResults
        do { results = try MergedResults.load(directories: directories) } catch {
            FileHandle.standardError.write(Data("xmppload report: \(error)\n".utf8))
            throw ExitCode(ExitStatus.usage.rawValue)
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
            Console.print("html report: \(htmlPath)")
        }
    }
}
