import ThresholdModel
import Yams

extension ProfileDecoder {
    /// `thresholds:` — a list of threshold texts (see `Threshold`). Each problem is placed at its
    /// file:line:column: the scalar's position plus the column inside the text.
    /// Each threshold comes with where its text starts, for `checkThresholdMetrics`.
    mutating func decodeThresholds(_ node: Node) -> [(threshold: Threshold, location: SourceLocation)] {
        guard let list = sequence(node, "thresholds") else { return [] }
        var thresholds: [(threshold: Threshold, location: SourceLocation)] = []
        for item in list {
            guard case .scalar(let scalar) = item else {
                problem(item, "each threshold is one line of text", hint: "e.g. - login.p99 < 800ms")
                continue
            }
            let start = location(item)
            let quoted = scalar.style == .singleQuoted || scalar.style == .doubleQuoted
            do {
                let parsed = try Threshold.parse(scalar.string)
                let leading = scalar.string.prefix { $0 == " " || $0 == "\t" }.count
                thresholds.append(
                    (parsed, SourceLocation(file: file, line: start.line, column: start.column + (quoted ? 1 : 0) + leading)))
            } catch {
                for syntax in error.problems {
                    let column = start.column + (quoted ? 1 : 0) + syntax.column - 1
                    problems.append(
                        ProfileProblem(
                            location: SourceLocation(file: file, line: start.line, column: column),
                            message: "threshold '\(scalar.string)': \(syntax.message)", hint: syntax.hint))
                }
            }
        }
        return thresholds
    }

    /// A threshold on a latency metric that none of `profiles`' steps nor the engine records
    /// (`logn.p99`) is a problem at the threshold, with a did-you-mean.
    mutating func checkThresholdMetrics(_ thresholds: [(threshold: Threshold, location: SourceLocation)], profiles: [WeightedProfile]) {
        let catalog = MetricCatalog(profiles: profiles)
        for (threshold, location) in thresholds {
            guard let found = catalog.problem(with: threshold) else { continue }
            problems.append(
                ProfileProblem(location: location, message: "threshold '\(threshold.text)': \(found.message)", hint: found.hint))
        }
    }
}
