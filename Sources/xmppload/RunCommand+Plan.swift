import Foundation
import LoadEngine
import LoadProfile
import LoadResults

/// What `run` derives from its options besides the configuration: threshold metrics checked against
/// the profile, the plan's ramp end and planned work for the verdict, and every flag as the manifest
/// records it.
extension RunFlags {
    /// The manifest's record of the flags the configuration does not carry (never the password:
    /// only where it came from).
    func recordedExtras(
        abortOnFail: Bool, thresholds: [Threshold], warmup: Duration, identity: RunIdentity, accounts accountsText: String
    )
        -> RunConfiguration.RecordedExtras
    {
        var extras = RunConfiguration.RecordedExtras()
        extras.variables = Dictionary(
            variables.compactMap { text in
                let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
            }, uniquingKeysWith: { $1 })
        extras.thresholds = thresholds.map(\.text)
        extras.warmupSeconds = warmup.seconds
        extras.abortOnFail = abortOnFail
        extras.dns = dns
        extras.runIDSource = identity.source.rawValue
        extras.wholeRunAccounts = RunCommand.parseRange(accountsText)?.count
        // As ConnectionDefaults reads them: the flags, then --server-env's file over the environment.
        let fileHasPassword =
            serverEnv.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) }?
            .split(separator: "\n").contains { $0.hasPrefix("XMPPLOAD_PASSWORD=") } ?? false
        if password != nil {
            extras.passwordSource = "--password"
        } else if let passwordFile {
            extras.passwordSource = "--password-file \(passwordFile)"
        } else if fileHasPassword, let serverEnv {
            extras.passwordSource = "--server-env \(serverEnv)"
        } else if ProcessInfo.processInfo.environment["XMPPLOAD_PASSWORD"] != nil {
            extras.passwordSource = "XMPPLOAD_PASSWORD"
        }
        extras.serverEnv = serverEnv
        extras.overwrite = overwrite
        extras.plain = plain
        return extras
    }
}

extension RunCommand {
    /// One line per `--threshold` on a latency metric `definition` cannot record (a typo such as
    /// `logn.p99`), with a did-you-mean.
    static func thresholdMetricProblems(_ thresholds: [Threshold], definition: RunDefinition) -> [String] {
        let catalog = MetricCatalog(definition)
        return thresholds.compactMap { threshold in
            catalog.problem(with: threshold).map { "--threshold '\(threshold.text)': \($0.message) (\($0.hint))" }
        }
    }

    /// Seconds since the start when the plan's last ramp ends (a closed phase's `ramp`, a ramping
    /// phase's whole length); nil when no phase ramps. Trends are judged only after it.
    static func rampEnd(_ plan: LoadPlan) -> Double? {
        var elapsed = 0.0
        var end: Double?
        for phase in plan.phases {
            switch phase.model {
            case .closed(_, let ramp) where ramp > .zero: end = elapsed + ramp.seconds
            case .rampingUsers, .openRamping: end = elapsed + phase.duration.seconds
            default: break
            }
            elapsed += phase.duration.seconds
        }
        return end
    }

    /// What the plan asks of this segment: its share of the schedule's arrivals, and the messages
    /// they send when the profiles send a fixed number (nil with sends until the load stops).
    static func plannedWork(plan: LoadPlan, definition: RunDefinition, segment: Segment) -> PlannedWork {
        let arrivals = ArrivalSchedule(plan: plan).totalArrivals
        let sessions = segment.arrivals(before: arrivals)
        let shape = PlanReport.SessionShape(definition: definition)
        let messages = shape.sustainedMessagesPerSecond > 0 ? nil : Int((shape.messages * Double(sessions)).rounded())
        return PlannedWork(sessions: sessions, messages: messages)
    }
}
