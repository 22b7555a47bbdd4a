import ArgumentParser
import Foundation
import LoadProfile
import LoadResults

// `xmppload report DIR…` on the capacity searches of several generators (`capacity --segment`).

/// Merges the ladders several generators climbed together (`capacity --segment i/N`, one
/// `--start-at`): step k of every generator is one step of the run, so their intervals are merged
/// (histograms and counters add, as `report` merges runs) and judged again with the search's rules;
/// the merged outcomes are replayed through the same `CapacitySearch` ladder for the answer. Only
/// the steps every generator ran, at the same load, are merged; the rest is said in the notes.
enum CapacityReport {
    struct Problem: Error, CustomStringConvertible {
        var description: String
    }

    static func merge(directories: [String], searches: [CapacityResult]) throws -> CapacityResult {
        guard let first = searches.first, searches.count == directories.count else {
            throw Problem(description: "every directory must hold a capacity search (summary.json with `capacity`)")
        }
        for (path, other) in zip(directories, searches).dropFirst() {
            guard other.rules == first.rules, other.dimension == first.dimension, other.start == first.start,
                other.growth == first.growth, other.warmupSeconds == first.warmupSeconds, other.stepSeconds == first.stepSeconds
            else {
                throw Problem(
                    description:
                        "\(path) is not the same search as \(directories[0]) (rules, dimension, --start, --ladder-ratio, --warmup and --step-duration must match)"
                )
            }
        }
        var rules: [Threshold] = []
        for text in first.rules {
            do { rules.append(try Threshold.parse(text)) } catch { throw Problem(description: "rule '\(text)': \(error)") }
        }
        let settings = CapacitySearch.Settings(
            start: first.start, max: first.max, resolution: first.resolution, integral: first.dimension == .sessions,
            growth: first.growth ?? 2, bisects: false)
        var search = CapacitySearch(settings)
        var steps: [CapacityStep] = []
        var notes = ["merged from \(directories.count) generators: each step's intervals added up, judged again"]
        let common = searches.map(\.steps.count).min() ?? 0
        for position in 0..<common {
            let asked = searches.map { $0.steps[position].asked }
            guard case .step(let load, let purpose) = search.next, asked.allSatisfy({ abs($0 - load) <= 1e-9 * max(1, load) }) else {
                notes.append(
                    "step \(position + 1): the generators asked \(asked.map { first.dimension.short($0) }) — not one ladder; merged no further")
                break
            }
            let stepDirectories = zip(directories, searches).map { ($0 as NSString).appendingPathComponent($1.steps[position].directory) }
            let intervals = try MergedResults.mergedIntervals(directories: stepDirectories)
            // A generator that cut the step short (a collapse it saw) ends the merged step there.
            let cuts = searches.map { $0.steps[position] }.filter(\.cutShort).map { first.warmupSeconds + $0.judgedSeconds }
            let step = CapacityJudge.judge(
                intervals: intervals, rules: rules, dimension: first.dimension, asked: load, warmup: first.warmupSeconds,
                loadEnd: first.warmupSeconds + first.stepSeconds, index: position + 1, purpose: purpose, cutAt: cuts.min(),
                directory: searches[0].steps[position].directory)
            steps.append(step)
            search.record(step.outcome)
        }
        if case .step = search.next, searches.contains(where: { $0.steps.count > common }) {
            notes.append("some generators ran more steps than others (\(searches.map(\.steps.count))): only the \(common) every one ran are merged")
        }
        var result = CapacityResult(
            search: search, steps: steps, rules: rules, dimension: first.dimension, warmupSeconds: first.warmupSeconds,
            stepSeconds: first.stepSeconds)
        result.notes = notes + result.notes
        return result
    }
}
