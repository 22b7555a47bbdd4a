import Foundation
import LoadProfile
import XMPPCore

/// The run's id, shared by the generators of one plan without ceremony: `--run-id` when given;
/// for one segment of several (`--segment i/N`) an id derived from the plan — the profiles'
/// SHA-256, the `--var` overrides, the seed, the whole account range, N and an absolute `--start-at` — so every
/// generator of the plan computes the same one and their stamped messages count across them; else a
/// fresh one. A segmented run without an absolute (RFC 3339) `--start-at` cannot derive one (a relative `+30s` differs per host; without a time, two runs of the same plan would share it) and warns at start.
public struct RunIdentity: Sendable, Equatable {
    /// Where the id came from; the raw value is what the manifest records.
    public enum Source: String, Sendable {
        /// `--run-id`.
        case given = "run-id"
        /// Derived from the plan of a segmented run.
        case plan
        /// Made up for a run of one generator (or a segmented run that could derive none).
        case generated
    }

    /// nil: `LoadRun` makes a fresh one.
    public var id: String?
    public var source: Source
    /// Printed at start when the generators of a segmented run cannot share an id.
    public var warning: String?

    public static func resolve(
        given: String?, definition: RunDefinition, plan: LoadPlan, accounts: String, segment: Segment, startAt: Date?,
        startAtIsAbsolute: Bool = true, variables: [String]
    ) -> RunIdentity {
        if let given { return RunIdentity(id: given, source: .given) }
        guard segment.count > 1 else { return RunIdentity(id: nil, source: .generated) }
        guard let startAt, startAtIsAbsolute else {
            let missing = startAt == nil ? "without --run-id or --start-at" : "with a relative --start-at and no --run-id"
            return RunIdentity(
                id: nil, source: .generated,
                warning:
                    "--segment \(segment) \(missing): this generator cannot share a run id with the others, so messages between generators will count as lost. Give every generator the same absolute --start-at (RFC 3339; the id is then derived from the plan) or the same --run-id."
            )
        }
        return RunIdentity(
            id: derived(definition: definition, plan: plan, accounts: accounts, segmentCount: segment.count, startAt: startAt, variables: variables),
            source: .plan)
    }

    /// `plan-<12 hex digits>` of the plan's SHA-256 (see the type's comment for what goes in).
    static func derived(
        definition: RunDefinition, plan: LoadPlan, accounts: String, segmentCount: Int, startAt: Date, variables: [String]
    ) -> String {
        var text = definition.profiles.map { Digest.sha256Hex($0.bytes) }.sorted().joined(separator: ",")
        text += "|vars=" + variables.sorted().joined(separator: ",")
        text += "|seed=\(plan.seed)|accounts=\(accounts)|segments=\(segmentCount)"
        text += "|start=\(Int64((startAt.timeIntervalSince1970 * 1000).rounded()))"
        return "plan-" + Digest.sha256Hex(Array(text.utf8)).prefix(12)
    }
}
