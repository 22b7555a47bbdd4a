extension RunSummary {
    /// Puts the verdict into the summary: thresholds (only when there are any), findings and the
    /// run's own verdict. When the run did not work at all (`RunOutcome.failed`) a `stop_reason` of
    /// `completed` or `duration` becomes the outcome's kind, so those say the load ran as planned only
    /// when it did (`interrupted` and `thresholds-failed` already say it did not).
    public mutating func apply(_ verdict: Verdict) {
        thresholds = verdict.thresholds.isEmpty ? nil : verdict.thresholds
        findings = verdict.findings
        trendsNote = verdict.trendsNote
        self.verdict = verdict.outcome
        if let limit = verdict.limit { (limitedBy, self.limit) = (limit.limitedBy.rawValue, limit) }
        if verdict.outcome.failed, StopReason(rawValue: stopReason)?.ranAsPlanned ?? true {
            stopReason = verdict.outcome.kind.rawValue
        }
    }

    /// The verdict section of the text report ("" when the summary has none).
    public var verdictText: String {
        var lines: [String] = []
        if let verdict {
            lines.append("verdict: \(verdict.kind.rawValue) — \(verdict.reason)")
            if let work = verdict.work { lines.append("  " + work.line) }
        }
        if let limit { lines.append("limited by \(limit.limitedBy.rawValue): \(limit.evidence)") }
        if let thresholds, !thresholds.isEmpty {
            let failed = thresholds.filter { $0.status == .fail }.count
            lines.append("thresholds: \(failed == 0 ? "all passed" : "\(failed) of \(thresholds.count) failed")")
            lines += thresholds.map { "  " + $0.line }
        }
        if let trendsNote {
            lines.append("trends: \(trendsNote)")
        } else if let findings, !findings.isEmpty {
            lines.append("trends (after warm-up and ramp):")
            lines += findings.map { "  " + $0.line }
        }
        return lines.isEmpty ? "" : lines.joined(separator: "\n") + "\n"
    }
}
