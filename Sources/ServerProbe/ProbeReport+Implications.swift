import Foundation
import LoadEngine
import XMPPCore

/// Turns a probe's facts into what they mean for profiles and flags: one sentence per fact that
/// changes how a run behaves (docs/PROFILES.md has the rules these sentences summarise). Pure.
extension ProbeReport {
    /// How long the presence step waits for an echo at most (docs/PROFILES.md, `presence`).
    public static let presenceEchoWait = "2 s"

    /// The profile settings these facts imply, in a fixed order; facts not learned imply nothing.
    public func impliedSettings() -> [String] {
        var lines: [String] = []
        if let tls, tls.verification == "failed" || tls.nameMatches == false {
            let why = tls.problem ?? (tls.nameMatches == false ? "hostname-mismatch" : "unverified")
            lines.append("the certificate does not verify (\(why)): runs need --insecure (or a trusted certificate for the domain)")
        }
        if tlsMode == TLSMode.startTLS.rawValue, let initial = streamFeatures.first(where: { $0.stage == .initial }),
            !initial.features.contains(where: { $0.name == "starttls" && $0.namespace == XMPPNamespace.tls })
        {
            lines.append("STARTTLS is not offered: runs need --tls none (plaintext) or --tls direct")
        }
        if let sasl { lines.append(contentsOf: Self.saslLines(sasl)) }
        if let registration {
            if !registration.offered {
                lines.append("registration not offered: `xmppload provision` fails with register-not-offered; create accounts another way")
            } else if !registration.extraFields.isEmpty {
                lines.append(
                    "registration open, but its form asks for more than username/password (\(registration.extraFields.joined(separator: ", "))): `xmppload provision` will likely fail; create accounts another way"
                )
            } else if registration.form?.answer == .error {
                lines.append(
                    "registration advertised, but the form query was refused (\(registration.form?.condition ?? "error")): `xmppload provision` will likely fail"
                )
            } else {
                lines.append("registration open: `xmppload provision` can create accounts")
            }
        }
        if let streamManagement {
            if streamManagement.contains(XMPPNamespace.streamManagement) {
                lines.append("stream_management: urn:xmpp:sm:3 offered — acks and resumption work")
            } else if streamManagement.isEmpty {
                lines.append("stream_management: not offered — sessions run without it (counted as sm_not_offered)")
            } else {
                lines.append(
                    "stream_management: server offers only \(streamManagement.joined(separator: ", ")) — not used (xmppload speaks urn:xmpp:sm:3; counted as sm_not_offered)"
                )
            }
        }
        if let presence {
            lines.append(
                presence.echoed
                    ? "presence is echoed: the presence step measures the echo's round trip"
                    : "presence is not echoed: the presence step completes after its bounded wait (\(Self.presenceEchoWait)), unmeasured, counted as presence_echo_missing"
            )
        }
        if let ping {
            switch ping.answer {
            case .result:
                lines.append("pings answered: keepalive {ping: D} measures keepalive.ping round trips")
            case .error:
                lines.append(
                    "pings answered with an error (\(ping.condition ?? "error")): keep-alive falls back to whitespace (counted as pings_unsupported); a profile's ping step fails"
                )
            case .timeout:
                lines.append("pings not answered: use keepalive {whitespace: D}; keepalive pings would end sessions as timeout-keepalive")
            }
        }
        if let discoItems, discoItems.outcome.answer == .result {
            if let muc = discoItems.mucService {
                lines.append(
                    muc == "conference.\(domain)"
                        ? "MUC service \(muc): muc profiles work with the default service"
                        : "MUC service \(muc): muc profiles need muc_join {service: \(muc)}")
            } else {
                lines.append("no MUC service found: muc profiles will fail")
            }
        }
        if let entityTime {
            if let clock = entityTime.clock {
                if abs(clock.offsetMilliseconds) > 1000 {
                    lines.append(
                        "this host's clock is \(Self.milliseconds(clock.offsetMilliseconds)) off the server's: cross-generator latencies are corrected by XEP-0202 (keep it, or sync clocks)"
                    )
                }
            } else {
                lines.append(
                    "no XEP-0202 entity time: message latencies across generators cannot be corrected for clock offset (sync the generators' clocks)")
            }
        }
        if let afterSASL = streamFeatures.first(where: { $0.stage == .afterSASL }) {
            lines.append(
                afterSASL.features.contains { $0.name == "csi" && $0.namespace == "urn:xmpp:csi:0" }
                    ? "client state indication offered: csi steps are sent"
                    : "client state indication not offered: csi steps send nothing and are said as csi-unsupported")
        }
        if let discoInfo, discoInfo.outcome.answer == .result {
            lines.append(
                discoInfo.features.contains("urn:xmpp:carbons:2")
                    ? "message carbons offered: carbons steps are measured (carbons.enable)"
                    : "message carbons not offered: carbons steps complete unmeasured, said as carbons-unsupported")
        }
        if let streamClose, !streamClose.answered {
            lines.append("the server does not answer </stream:stream>: logout completes after its bounded wait")
        }
        return lines
    }

    /// "--sasl SCRAM-SHA-1, PLAIN work; SCRAM-SHA-512, SCRAM-SHA-256 not offered", and the offered
    /// mechanisms xmppload cannot use.
    static func saslLines(_ sasl: SASLFacts) -> [String] {
        var lines: [String] = []
        let ours = SASLMechanism.preferenceWithChannelBinding.map(\.name)
        let usable = ours.filter { name in sasl.supported.contains { $0.uppercased() == name } }
        let missing = SASLMechanism.preference.map(\.name).filter { !usable.contains($0) }
        // Runs pick the strongest usable mechanism: a -PLUS one when the connection has TLS to bind to.
        let withoutBinding = usable.first { name in SASLMechanism(name: name).map { !$0.usesChannelBinding } ?? false }
        let defaultNote: String? = usable.first.map { first in
            guard first.hasSuffix("-PLUS") else { return " (default: \(first))" }
            return " (default: \(first) over TLS" + (withoutBinding.map { ", \($0) without" } ?? "") + ")"
        }
        if usable.isEmpty {
            lines.append(
                "no usable SASL mechanism (offered: \(sasl.offered.isEmpty ? "none" : sasl.offered.joined(separator: ", "))): every login fails with sasl-no-common-mechanism"
            )
        } else {
            lines.append(
                "--sasl \(usable.joined(separator: ", ")) \(usable.count == 1 ? "works" : "work")"
                    + (missing.isEmpty ? "" : "; \(missing.joined(separator: ", ")) not offered")
                    + (defaultNote ?? ""))
        }
        if !sasl.unsupported.isEmpty {
            lines.append("offered but not spoken by xmppload: \(sasl.unsupported.joined(separator: ", "))")
        }
        return lines
    }

    static func milliseconds(_ value: Double) -> String {
        abs(value) >= 100 ? "\(Int(value.rounded())) ms" : String(format: "%.1f ms", value)
    }
}
