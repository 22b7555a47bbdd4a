import LoadProfile
import SessionCore

/// Chooses `to: random` targets over the whole run's online population when this generator is one
/// segment of several (`--segment i/N`), so messages cross generators as they would cross real
/// users: another generator's sessions are taken from the plan (`PlannedPopulation`), this
/// generator's own from the live `OnlineDirectory`. With one segment it is exactly the directory.
///
/// Answers are account slots relative to this generator's first account
/// (`SessionSettings.bareJID(slot:)` renders them): a remote account gives a slot outside
/// `0 ..< directory.capacity`, possibly negative. One per event loop (no shared state beyond the
/// directory, which is lock-free).
struct WholeRunTargets {
    let directory: OnlineDirectory
    /// nil: a run of one segment (or no plan): only the directory.
    let population: PlannedPopulation?
    let segment: Segment
    /// This generator's first account number (`configuration.accounts.lowerBound`).
    let firstAccount: Int

    /// A random online slot other than `excluded`, at `now` on the run's session clock; nil when the
    /// plan has nobody online or the local choice found nobody online.
    func randomOnlineSlot(excluding excluded: Int, at now: SessionInstant, using generator: inout SeededGenerator) -> Int? {
        guard let population, population.segmentCount > 1 else {
            return directory.randomOnline(excluding: excluded, using: &generator)
        }
        let time = Duration.nanoseconds(max(now.nanoseconds, 0))
        switch population.randomTarget(from: segment.index, at: time, using: &generator) {
        case .local: return directory.randomOnline(excluding: excluded, using: &generator)
        case .remote(let account): return account - firstAccount
        case nil: return nil
        }
    }
}
