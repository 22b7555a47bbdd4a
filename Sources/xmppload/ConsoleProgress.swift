import Foundation
import LoadEngine
import LoadProfile
import LoadResults

/// Prints what a run is doing: a header, one progress line per interval (or, on a terminal, an
/// in-place status line with a progress bar), its notices, and the text report at the end. A run
/// sink: fed the same intervals as the results files.
final class ConsoleProgress: RunSink {
    let interactive: Bool
    let runID: String
    let outputDirectory: String

    init(interactive: Bool, runID: String, outputDirectory: String) {
        self.interactive = interactive
        self.runID = runID
        self.outputDirectory = outputDirectory
    }

    func started(configuration: RunConfiguration, plan: LoadPlan, profile: RunDefinition) {
        let names = profile.profiles.map {
            "\($0.profile.name)" + (profile.profiles.count > 1 ? " ×\($0.weight)" : "")
                + ($0.profile.transport == .any ? "" : " [\($0.profile.transport.rawValue)]")
        }
        let others = configuration.endpoints.count > 1 ? " +\(configuration.endpoints.count - 1) endpoint(s)" : ""
        Console.print(
            "xmppload run \(runID): \(names.joined(separator: ", ")) → \(configuration.host):\(configuration.port)\(others) (\(configuration.domain))"
        )
        Console.print(
            "load: \(plan.summary); accounts \(configuration.accountPrefix)\(configuration.accounts.lowerBound)..\(configuration.accounts.upperBound); results: \(outputDirectory)"
        )
    }

    func intervalEnded(_ interval: IntervalEnd) {
        let elapsed = interval.elapsed
        let planned = interval.planned
        var line = ProgressLine.render(interval: interval.snapshot, elapsed: elapsed.seconds, planned: planned?.seconds)
        // The server beside the load (`--monitor`): the latest monitor interval.
        if let monitored = interval.monitor.last.map(ProgressLine.monitorText), !monitored.isEmpty { line += "  | " + monitored }
        if interactive {
            let bar = planned.map { Self.bar(fraction: elapsed.seconds / max($0.seconds, 0.001)) + " " } ?? ""
            Console.print("\r\u{1B}[2K" + bar + line, terminator: "")
        } else {
            Console.print(line)
        }
    }

    func notice(_ notice: RunNotice) {
        switch notice {
        case .metricsEndpoint(let url):
            Console.print("prometheus metrics: \(url)")
        case .inputEndpoint(let name, let url):
            Console.print("\(name): \(url) (xmppload \(name) \(url.replacingOccurrences(of: "http://", with: "")) status)")
        case .stopping(let reason):
            Console.print((interactive ? "\n" : "") + "stopping (\(reason.rawValue)): sessions finish their step and log out")
        case .intervalWritesFailing(let failures):
            Console.print((interactive ? "\n" : "") + "warning: \(failures.sentence); the run goes on and retries each interval")
        case .intervalWritesRecovered(let failures):
            Console.print((interactive ? "\n" : "") + "intervals.jsonl is written again: \(failures.sentence)")
        case .thresholdFailed(let failed):
            FileHandle.standardError.write(Data("xmppload: threshold failed: \(failed.line) — stopping (--abort-on-fail)\n".utf8))
        case .stopRuleFired(let reason):
            Console.print((interactive ? "\n" : "") + "stopping: \(reason)")
        case .monitorWarning(let warning):
            FileHandle.standardError.write(Data(((interactive ? "\n" : "") + "xmppload: warning: \(warning)\n").utf8))
        case .controlChanged:
            // intervals.jsonl records it; `xmppload control … status` shows the load now.
            break
        }
    }

    /// The text report with the verdict.
    func finished(summary: RunSummary) {
        if interactive { Console.print("") }
        Console.print("")
        Console.print(TextReport.render(summary), terminator: "")
        // forensics.json exists only when a session failed (the stanzas behind each error kind).
        let forensics = FileManager.default.fileExists(atPath: "\(outputDirectory)/\(ResultsDirectory.forensicsFile)")
        Console.print(
            "results: \(outputDirectory)/summary.json, intervals.jsonl, manifest.json, report.html"
                + (forensics ? ", \(ResultsDirectory.forensicsFile)" : ""))
    }

    static func bar(fraction: Double, width: Int = 20) -> String {
        let filled = Int((min(max(fraction, 0), 1) * Double(width)).rounded())
        return "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "]"
    }
}

/// Unbuffered writes to stdout: progress must show up while a run goes, even through a pipe.
enum Console {
    static func print(_ text: String = "", terminator: String = "\n") {
        FileHandle.standardOutput.write(Data((text + terminator).utf8))
    }
}
