extension RunSummary {
    /// Puts the outage analysis into the summary: the outages of `timeline` (those starting before
    /// `loadEnd`, seconds since the run's start), the lost messages inside vs outside their windows
    /// (when `losses`, the lost messages by the interval they were sent in, are known) and the
    /// generator's RSS slope over the end of the load.
    public mutating func analyseOutages(timeline: MergedResults.Timeline, loadEnd: Double?, losses: [MessageLossBucket]?) {
        if let losses { messages.lostWhenSent = losses.sorted { $0.start < $1.start } }
        let found = timeline.outageFinder.outages(losses: losses).filter { outage in loadEnd.map { outage.start < $0 } ?? true }
        outages = found
        messageLoss = OutageFinder.split(outages: found, losses: losses, totalLost: messages.lost, loadEnd: loadEnd)
        rssTail = RSSTail(points: timeline.points, loadEnd: loadEnd, outages: found)
    }

    /// True when this summary is one generator's of several (a segment, or a shared `--run-id`): its
    /// verdict leaves loss to `report` over every generator (`RunWork.messagesLost` nil), because a
    /// message sent here may have been received by another generator's session. Its own loss
    /// figures (the ledger's `lost`, the split by outage) count those as lost, so none is printed.
    public var lossJudgedByReport: Bool {
        guard let work = verdict?.work else { return false }
        return work.messagesLost == nil
    }

    /// What the reports say instead of a loss figure when `lossJudgedByReport`.
    public static let lossJudgedByReportText = "judged by `report` over every generator"

    /// The outage section of the text report ("" when the summary has no outage analysis).
    public var outageText: String {
        var lines: [String] = []
        if let outages {
            lines.append(outages.isEmpty ? "outages: none found" : "outages: \(outages.count)")
            lines += outages.enumerated().map { "  \($0.offset + 1). " + $0.element.line(withLoss: !lossJudgedByReport) }
        }
        if lossJudgedByReport {
            if messageLoss != nil { lines.append("messages lost: \(Self.lossJudgedByReportText)") }
        } else if let messageLoss {
            lines.append(
                "messages lost: \(messageLoss.inOutages) sent inside outage windows, \(messageLoss.outside) outside"
                    + (messageLoss.outsideBuckets.isEmpty
                        ? ""
                        : " (sent at "
                            + messageLoss.outsideBuckets.prefix(5).map { "\(Outage.seconds($0.start)) s ×\($0.lost)" }.joined(separator: ", ") + ")")
                    + (messageLoss.afterLoad > 0 ? ", \(messageLoss.afterLoad) sent after the load stopped" : ""))
        }
        if let rssTail { lines.append(rssTail.line) }
        return lines.isEmpty ? "" : lines.joined(separator: "\n") + "\n"
    }
}
