/// Why two sets of runs cannot be compared honestly: each run must have completed as planned
/// (`summary.json` present, stop reason `completed` or `duration`), with no generator-saturated
/// interval, and every run must have used the same profiles (SHA-256), load model, planned load,
/// seed, segment and every setting that changes the load (`settingsDifferences`: `--var`s, TLS
/// mode, SASL mechanism, churn, reconnect attempts, account count, transports, number of endpoints)
/// as the first run with a manifest. `reasons` lists every problem at once; empty means comparable.
///
/// The server address is deliberately not compared: a different build usually listens elsewhere.
/// Settings a manifest written before they were recorded lacks (nil) are not a difference.
public enum Comparability {
    public static func reasons(baseline: [MeasuredRun], candidate: [MeasuredRun]) -> [String] {
        var reasons: [String] = []
        let all = baseline.map { ("baseline", $0) } + candidate.map { ("candidate", $0) }
        for (side, run) in all {
            let name = "\(side) \(run.directory)"
            guard run.manifest != nil else {
                reasons.append("\(name): no readable manifest.json")
                continue
            }
            guard let outcome = run.outcome else {
                reasons.append("\(name): the run did not complete (no summary.json)")
                continue
            }
            if StopReason(rawValue: outcome.stopReason)?.ranAsPlanned != true {
                reasons.append("\(name): the run did not complete (stop reason \(outcome.stopReason))")
            }
            if outcome.saturatedIntervals > 0 {
                reasons.append(
                    "\(name): the generator saturated in \(outcome.saturatedIntervals) interval(s); those latencies measure the generator, not the server"
                )
            }
            if run.intervals.isEmpty {
                reasons.append("\(name): no intervals recorded")
            }
        }
        guard let reference = (baseline + candidate).compactMap(\.manifest).first,
            let referenceRun = (baseline + candidate).first(where: { $0.manifest != nil })
        else { return reasons }
        for (side, run) in all where run.directory != referenceRun.directory {
            guard let manifest = run.manifest else { continue }
            let name = "\(side) \(run.directory)"
            let profiles = manifest.profiles.map { "\($0.name) \($0.sha256.prefix(12))" }.sorted()
            let referenceProfiles = reference.profiles.map { "\($0.name) \($0.sha256.prefix(12))" }.sorted()
            if profiles != referenceProfiles {
                reasons.append(
                    "\(name): different profile (\(profiles.joined(separator: ", ")) vs \(referenceProfiles.joined(separator: ", ")) in \(referenceRun.directory))"
                )
            }
            if manifest.loadModel != reference.loadModel {
                reasons.append("\(name): different load (\(manifest.loadModel) vs \(reference.loadModel) in \(referenceRun.directory))")
            } else if let planned = manifest.plannedLoad, let referencePlanned = reference.plannedLoad, planned != referencePlanned {
                reasons.append("\(name): different planned load than \(referenceRun.directory)")
            }
            if manifest.seed != reference.seed {
                reasons.append("\(name): different seed (\(manifest.seed) vs \(reference.seed) in \(referenceRun.directory))")
            }
            if manifest.segment != reference.segment {
                reasons.append("\(name): different segment (\(manifest.segment) vs \(reference.segment) in \(referenceRun.directory))")
            }
            if let settings = manifest.settings, let referenceSettings = reference.settings {
                for difference in settingsDifferences(settings, referenceSettings) {
                    reasons.append("\(name): different \(difference) in \(referenceRun.directory))")
                }
            }
        }
        return reasons
    }

    /// The load-changing settings in which `settings` differs from `reference`, each as
    /// "what (this vs reference" — the caller closes the parenthesis after naming the reference run.
    ///
    /// `tls` and `sasl` are always recorded (nil: the profile's choice), so nil is a value. The
    /// others came with manifest 0.2 (`endpoints` present): in a manifest without them nil means
    /// "not recorded" and is no difference; in newer ones nil means none (`--churn`) or the
    /// profile's (`--reconnect`) and is compared.
    public static func settingsDifferences(_ settings: RunSettings, _ reference: RunSettings) -> [String] {
        var differences: [String] = []
        let bothRecordAll = settings.endpoints != nil && reference.endpoints != nil
        func compare<T: Equatable>(_ what: String, _ value: T?, _ referenceValue: T?, always: Bool = false, _ show: (T?) -> String) {
            guard always || bothRecordAll || (value != nil && referenceValue != nil) else { return }
            if value != referenceValue { differences.append("\(what) (\(show(value)) vs \(show(referenceValue))") }
        }
        let variables = bothRecordAll ? (settings.variables ?? [:]) : settings.variables
        let referenceVariables = bothRecordAll ? (reference.variables ?? [:]) : reference.variables
        compare("--var", variables, referenceVariables) { value in
            guard let value, !value.isEmpty else { return "none" }
            return value.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        compare("TLS mode", settings.tls, reference.tls, always: true) { $0 ?? "the profile's" }
        compare("SASL mechanism", settings.sasl, reference.sasl, always: true) { $0 ?? "the profile's" }
        compare("churn", settings.churnPerSecond, reference.churnPerSecond) { $0.map { "\(Self.number($0))/s" } ?? "none" }
        compare("reconnect attempts", settings.reconnectAttempts, reference.reconnectAttempts) { $0.map(String.init) ?? "the profile's" }
        compare("account count", settings.accountCount ?? accountCount(settings.accounts), reference.accountCount ?? accountCount(reference.accounts))
        {
            $0.map(String.init) ?? "unknown"
        }
        compare("transports", settings.transports, reference.transports) { $0?.joined(separator: ", ") ?? "unknown" }
        compare("number of endpoints", settings.endpoints?.count, reference.endpoints?.count) { $0.map(String.init) ?? "unknown" }
        return differences
    }

    /// The number of accounts in `FIRST-LAST` (nil when it is not in that form).
    static func accountCount(_ range: String) -> Int? {
        let parts = range.split(separator: "-")
        guard parts.count == 2, let first = Int(parts[0]), let last = Int(parts[1]), last >= first else { return nil }
        return last - first + 1
    }

    static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
