import Testing

@testable import LoadEngine

/// When the run gives freed pages back to the kernel (`HeapRelease`): after a wave of closed
/// connections has settled (or waited long enough), never for a few closures, at most once per
/// spacing. Each row is a sequence of polls (closed connections so far, live sessions, milliseconds
/// since the start) and the polls at which a release happens.
@Suite struct HeapReleaseTests {
    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var polls: [(closed: Int, live: Int, ms: Int)]
        var releasesAt: [Int]
        var testDescription: String { name }
    }

    /// Polls every 50 ms from `from` to `to` ms with `closed` closures so far.
    static func hold(_ closed: Int, live: Int = 2000, from: Int, to: Int) -> [(closed: Int, live: Int, ms: Int)] {
        stride(from: from, through: to, by: 50).map { (closed, live, $0) }
    }

    static let rows: [Row] = [
        Row(name: "nothing closes", polls: hold(0, from: 0, to: 5_000), releasesAt: []),
        Row(name: "a few closures are no wave", polls: hold(63, live: 100, from: 0, to: 5_000), releasesAt: []),
        Row(
            name: "under 5 % of the live sessions is no wave",
            polls: hold(99, live: 2000, from: 0, to: 5_000), releasesAt: []),
        Row(
            name: "a restart: 2,000 close over 200 ms, released 300 ms after the last",
            polls: [(0, 2000, 0), (500, 2000, 50), (1200, 2000, 100), (2000, 2000, 150), (2000, 2000, 200)] + hold(2000, from: 250, to: 3_000),
            releasesAt: [450]),
        Row(
            name: "a wave that keeps rising is released after 2 s",
            polls: stride(from: 0, through: 3_000, by: 50).map { (100 + $0, 2000, $0) },
            releasesAt: [2_000]),
        Row(
            name: "two restarts 5 s apart: the second waits for the 10 s spacing",
            polls: hold(0, from: 0, to: 950) + hold(2000, from: 1_000, to: 5_950) + hold(4000, from: 6_000, to: 12_000),
            releasesAt: [1_300, 11_300]),
        Row(
            name: "two restarts 20 s apart: both released",
            polls: hold(2000, from: 0, to: 19_950) + hold(4000, from: 20_000, to: 25_000),
            releasesAt: [300, 20_300]),
        Row(
            name: "churn: 100 closures accumulate, then a release",
            polls: stride(from: 0, through: 30_000, by: 50).map { ($0 / 200, 2000, $0) },
            releasesAt: [22_000]),
    ]

    @Test(arguments: rows)
    func releases(_ row: Row) {
        var policy = HeapRelease()
        var released: [Int] = []
        for poll in row.polls where policy.observe(closed: poll.closed, live: poll.live, now: .milliseconds(poll.ms)) {
            released.append(poll.ms)
        }
        #expect(released == row.releasesAt)
        #expect(policy.releases == row.releasesAt.count)
    }

    @Test func glibcsTrimIsFound() {
        #if canImport(Glibc)
        #expect(HeapRelease.isAvailable, "malloc_trim not found: the release would be a no-op")
        #endif
    }
}
