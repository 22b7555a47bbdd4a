extension HTMLReport {
    /// The outage section: a table of the outages (window, sessions dropped, connection errors, the
    /// reconnect storm and its login latency, time to recover, messages lost), the lost messages
    /// inside vs outside the windows and the generator's RSS slope over the load's end. Empty when the
    /// summary carries no outage analysis.
    static func outageSection(_ summary: RunSummary) -> String {
        guard summary.outages != nil || summary.rssTail != nil else { return "" }
        var html = "<h2>Outages</h2>"
        let outages = summary.outages ?? []
        if outages.isEmpty {
            html += "<p class=\"meta\">No outage: the online sessions never dropped sharply and connection errors never spiked.</p>"
        } else {
            html +=
                "<table><tr><th>#</th><th>window (s)</th><th>online before → lowest</th><th>dropped</th><th>connection errors</th>"
                + "<th>reconnects (logged in again)</th><th>reconnect login p50 / p99 ms</th><th>back to 95 % after</th><th>messages lost</th></tr>"
            for (index, outage) in outages.enumerated() {
                let latency = outage.reconnectLogin.map { "\(TextReport.formatMs($0.p50)) / \(TextReport.formatMs($0.p99))" } ?? "–"
                let recovery = outage.timeToRecover.map { "\(Outage.seconds($0)) s" } ?? "not back"
                html +=
                    "<tr><td>\(index + 1)</td><td>\(Outage.seconds(outage.start))–\(Outage.seconds(outage.end))</td>"
                    + "<td>\(outage.onlineBefore) → \(outage.onlineLowest)</td><td>\(outage.dropped)</td><td>\(outage.connectionErrors)</td>"
                    + "<td>\(outage.reconnects) (\(outage.reconnected))</td><td>\(esc(latency))</td><td>\(esc(recovery))</td>"
                    + "<td>\((summary.lossJudgedByReport ? nil : outage.messagesLost).map { "\($0)" } ?? "–")</td></tr>"
            }
            html += "</table>"
        }
        if summary.lossJudgedByReport {
            if summary.messageLoss != nil { html += "<p class=\"meta\">Messages lost: \(esc(RunSummary.lossJudgedByReportText)).</p>" }
        } else if let loss = summary.messageLoss {
            html +=
                "<p class=\"\(loss.outside > 0 ? "warn" : "meta")\">Messages lost: \(loss.inOutages) sent inside outage windows, \(loss.outside) outside"
                + (loss.afterLoad > 0 ? ", \(loss.afterLoad) sent after the load stopped" : "") + ".</p>"
        }
        if let tail = summary.rssTail { html += "<p class=\"\(tail.trend.driftingUp ? "warn" : "meta")\">\(esc(tail.line))</p>" }
        return html
    }

    /// The outages' windows (start to recovery, or to the storm's end) as chart bands.
    static func outageBands(_ summary: RunSummary) -> [(start: Double, end: Double, label: String)] {
        (summary.outages ?? []).enumerated().map { index, outage in
            (outage.start, outage.stormEnd, "outage \(index + 1): \(outage.line)")
        }
    }
}
