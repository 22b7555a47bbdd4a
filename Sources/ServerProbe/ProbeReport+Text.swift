import Foundation
import LoadEngine

/// Renders a probe report for people: one section per fact, in the order the probe learned them,
/// then the implied profile settings. Pure: the same report always gives the same text.
extension ProbeReport {
    /// The report as text (ends with a newline).
    public func text() -> String {
        var out: [String] = []
        out.append(
            "probe \(server) (domain \(domain), tls \(tlsMode)\(account.map { ", account \($0)" } ?? ", no account: stops before SASL")) at \(startedAt)"
        )
        for stage in streamFeatures {
            let names = stage.features.map { "\($0.name) (\($0.namespace))" }
            out.append("stream features \(Self.stageLabel(stage.stage)):" + (names.isEmpty ? " none" : ""))
            out += names.map { "  \($0)" }
        }
        if let tls {
            out.append("tls: \(tls.version ?? "?") \(tls.cipher ?? "cipher ?")")
            if let certificate = tls.certificate {
                out.append("  certificate subject: \(certificate.subject)")
                out.append("  issuer: \(certificate.issuer)")
                out.append("  valid: \(certificate.notBefore) .. \(certificate.notAfter)")
                if !certificate.dnsNames.isEmpty { out.append("  dns names: \(certificate.dnsNames.joined(separator: ", "))") }
            }
            var verdict = "  verification: \(tls.verification)"
            if let problem = tls.problem { verdict += " (\(problem))" }
            if let matches = tls.nameMatches {
                verdict += matches ? "; domain matches the certificate" : "; domain \(domain) is not in the certificate"
            }
            out.append(verdict)
        }
        if let sasl {
            out.append("sasl offered: \(Self.list(sasl.offered))")
            out.append("  usable by xmppload: \(Self.list(sasl.supported)); not supported here: \(Self.list(sasl.unsupported))")
            if let used = sasl.used { out.append("  used: \(used)") }
        }
        if let modernLogin { out += Self.modernLoginLines(modernLogin) }
        if let registration {
            var line = "in-band registration: \(registration.offered ? "offered" : "not offered")"
            if let form = registration.form {
                line += "; form: \(Self.outcome(form))"
                if let fields = registration.fields { line += ", fields \(Self.list(fields))" }
            }
            out.append(line)
            if let instructions = registration.instructions, !instructions.isEmpty { out.append("  instructions: \(instructions)") }
        }
        if let streamManagement { out.append("stream management (XEP-0198): \(Self.list(streamManagement))") }
        if let login {
            out.append("logged in as \(login.jid)")
            out.append("  " + login.phases.map { "\($0.phase) \(Self.milliseconds($0.milliseconds))" }.joined(separator: ", "))
        }
        if let discoInfo {
            out.append("disco#info: \(Self.outcome(discoInfo.outcome))")
            for identity in discoInfo.identities {
                out.append("  identity \(identity.category)/\(identity.type)\(identity.name.map { " \"\($0)\"" } ?? "")")
            }
            let notable = Self.notableFeatures.compactMap { pair in discoInfo.features.contains(pair.namespace) ? pair.label : nil }
            if !notable.isEmpty { out.append("  notable: \(notable.joined(separator: ", "))") }
            out += discoInfo.features.map { "  feature \($0)" }
        }
        if let discoItems {
            out.append("disco#items: \(Self.outcome(discoItems.outcome)); items \(Self.list(discoItems.items))")
            out.append("  MUC service: \(discoItems.mucService ?? "none found")")
        }
        if let software {
            let parts = [software.name, software.version, software.os.map { "on \($0)" }].compactMap { $0 }
            out.append("software version (XEP-0092): \(Self.outcome(software.outcome))\(parts.isEmpty ? "" : "; \(parts.joined(separator: " "))")")
        }
        if let presence {
            out.append(
                presence.echoed
                    ? "initial presence: echoed after \(Self.milliseconds(presence.latencyMilliseconds ?? 0))"
                    : "initial presence: not echoed within \(Self.milliseconds(presence.waitedMilliseconds))")
        }
        if let ping { out.append("ping (XEP-0199): \(Self.outcome(ping))") }
        if let entityTime {
            var line = "entity time (XEP-0202): \(Self.outcome(entityTime.outcome))"
            if let clock = entityTime.clock {
                line +=
                    "; clock offset (server - this host) \(Self.milliseconds(clock.offsetMilliseconds)) ± \(Self.milliseconds(clock.uncertaintyMilliseconds)) from \(clock.samples) samples"
            }
            out.append(line)
        }
        if let streamClose {
            out.append(
                streamClose.answered
                    ? "stream close: answered after \(Self.milliseconds(streamClose.milliseconds ?? 0))"
                    : "stream close: not answered")
        }
        if let failure {
            out.append("FAILED at \(failure.phase): \(failure.kind): \(failure.detail)")
            if let hint = failure.hint { out.append("  hint: \(hint)") }
        }
        if !implications.isEmpty {
            out.append("implied profile settings:")
            out += implications.map { "  - \($0)" }
        }
        return out.joined(separator: "\n") + "\n"
    }

    /// Disco features worth naming, with a label.
    static let notableFeatures: [(namespace: String, label: String)] = [
        ("urn:xmpp:carbons:2", "carbons"), ("urn:xmpp:mam:2", "MAM"), ("urn:xmpp:csi:0", "CSI"),
        ("urn:xmpp:ping", "ping"), ("urn:xmpp:blocking", "blocking"), ("urn:xmpp:time", "entity time"),
        ("jabber:iq:version", "version"), ("http://jabber.org/protocol/pubsub#publish", "PEP/pubsub"),
        ("jabber:iq:register", "registration"), ("vcard-temp", "vcard"), ("msgoffline", "offline messages"),
    ]

    static func stageLabel(_ stage: FeatureStage.Stage) -> String {
        switch stage {
        case .initial: return "(initial)"
        case .afterTLS: return "(after TLS)"
        case .afterSASL: return "(after SASL)"
        }
    }

    static func outcome(_ outcome: QueryOutcome) -> String {
        switch outcome.answer {
        case .result: return "result" + (outcome.roundTripMilliseconds.map { " in \(milliseconds($0))" } ?? "")
        case .error: return "error <\(outcome.condition ?? "?")/>" + (outcome.roundTripMilliseconds.map { " in \(milliseconds($0))" } ?? "")
        case .timeout: return "no answer"
        }
    }

    static func list(_ names: [String]) -> String { names.isEmpty ? "none" : names.joined(separator: ", ") }
}
