// report.html's "Login failures by phase" table and its "Why did these fail" section (forensics).
import Foundation

extension HTMLReport {
    /// Failed logins per phase, with their kinds and a hint; empty when no login failed.
    static func loginFailuresSection(_ summary: RunSummary) -> String {
        guard let failures = summary.loginFailures, !failures.isEmpty else { return "" }
        var html = "<h2>Login failures by phase</h2><table><tr><th>phase</th><th>failed logins</th><th>error kinds</th><th>hint</th></tr>"
        for phase in LoginFailures.orderedPhases(failures) {
            let kinds = failures[phase] ?? [:]
            let total = kinds.values.reduce(0, +)
            let listed = kinds.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            html +=
                "<tr><td>\(esc(phase))</td><td>\(total)</td><td>\(esc(listed))</td><td>\(esc(LoginFailureHint.hint(phase: phase, kinds: kinds) ?? ""))</td></tr>"
        }
        return html + "</table>"
    }

    /// "Why did these fail": per error kind, its first failed sessions (who, node, phase, detail) and
    /// their last stanzas in order, with direction arrows and milliseconds since the session's start.
    static func forensicsSection(_ forensics: FailureForensics?) -> String {
        guard let forensics, !forensics.isEmpty else { return "" }
        var html =
            "<h2 id=\"forensics\">Why did these fail</h2><p class=\"meta\">The first \(FailureForensics.sessionsPerKind) failed sessions of each error kind (at most \(FailureForensics.maxKinds) kinds) with their last \(FailureForensics.stanzasPerSession) stanzas and connection events, each cut at \(FailureForensics.maxStanzaBytes) bytes; times in ms since the session's start; credentials and SASL payloads redacted. Also in forensics.json.</p>"
        let kinds = forensics.kinds.sorted { lhs, rhs in
            (lhs.value[0].failedAtSeconds, lhs.key) < (rhs.value[0].failedAtSeconds, rhs.key)
        }
        for (kind, sessions) in kinds {
            html += "<h3>\(esc(kind))</h3>"
            for session in sessions {
                var who = "session \(session.session) · \(esc(session.account))"
                if let node = session.node { who += " · node \(esc(node))" }
                who += " · phase \(esc(session.phase ?? "after login"))"
                who += " · failed at \(String(format: "%.3f", session.failedAtSeconds)) s"
                html += "<p><b>\(who)</b>"
                if let detail = session.detail { html += "<br>\(esc(detail))" }
                html += "</p><table class=\"transcript\"><tr><th>ms</th><th></th><th>stanza</th></tr>"
                if session.stanzas.isEmpty {
                    html += "<tr><td></td><td></td><td class=\"empty\">no stanza was exchanged</td></tr>"
                }
                for stanza in session.stanzas {
                    let arrow: String
                    switch stanza.direction {
                    case .sent: arrow = "→"
                    case .received: arrow = "←"
                    case .event: arrow = "·"
                    }
                    html +=
                        "<tr><td>\(String(format: "%.1f", stanza.atMilliseconds))</td><td title=\"\(stanza.direction.rawValue)\">\(arrow)</td><td><code>\(esc(stanza.text))</code></td></tr>"
                }
                html += "</table>"
            }
        }
        return html
    }
}
