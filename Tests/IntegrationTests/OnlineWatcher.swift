import Foundation
import LoadEngine
import LoadResults

/// A run sink that remembers how many sessions were online at the latest interval's end, so a
/// test acts once every session is online (cuts connections, stops the server) instead of after a
/// fixed sleep, which a busy machine does not honour.
final class OnlineWatcher: RunSink, @unchecked Sendable {
    // @unchecked: `online` is only touched while holding `lock`.
    private let lock = NSLock()
    private var online: Int64 = 0

    func intervalEnded(_ interval: IntervalEnd) {
        lock.withLock { online = interval.snapshot.gauge(.online) }
    }

    /// Waits until at least `count` sessions were online at an interval's end; false when `limit`
    /// passed first.
    func waitUntilOnline(_ count: Int, within limit: Duration) async throws -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if lock.withLock({ online }) >= count { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return false
    }
}
