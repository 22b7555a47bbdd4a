/// Why two sets of runs cannot be compared honestly: each run must have completed as planned
/// (`summary.json` present, stop reason `completed` or `duration`), with no generator-saturated
/// interval, and every run must have used the same profiles (SHA-256), load model, planned load and
/// seed as the first baseline run. `reasons` lists every problem at once; empty means comparable.
///
/// The server address is deliberately not compared: a different build usually listens elsewhere.
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
        }
        return reasons
    }
}
