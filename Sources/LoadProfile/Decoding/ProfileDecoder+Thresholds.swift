import Yams

extension ProfileDecoder {
    /// `thresholds:` — a list of threshold texts (see `Threshold`). Each problem is placed at its
    /// file:line:column: the scalar's position plus the column inside the text.
    mutating func decodeThresholds(_ node: Node) -> [Threshold] {
        guard let list = sequence(node, "thresholds") else { return [] }
        var thresholds: [Threshold] = []
        for item in list {
            guard case .scalar(let scalar) = item else {
                problem(item, "each threshold is one line of text", hint: "e.g. - login.p99 < 800ms")
                continue
            }
            do {
                thresholds.append(try Threshold.parse(scalar.string))
            } catch {
                let start = location(item)
                let quoted = scalar.style == .singleQuoted || scalar.style == .doubleQuoted
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
}
