/// This generator's share of the arrivals: `--segment i/N` takes every arrival n with n % N == i, so N
/// generators started with segments 0/N … (N−1)/N together run the plan exactly once, with no
/// coordinator.
public struct Segment: Sendable, Equatable, CustomStringConvertible {
    public let index: Int
    public let count: Int

    public init(index: Int, count: Int) {
        precondition(count > 0 && index >= 0 && index < count, "segment index must be in 0..<count")
        self.index = index
        self.count = count
    }

    public static let whole = Segment(index: 0, count: 1)

    /// Parses `i/N`.
    public init?(parsing text: String) {
        let parts = text.split(separator: "/")
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), count > 0, index >= 0, index < count else { return nil }
        self.init(index: index, count: count)
    }

    public func contains(_ arrival: Int) -> Bool { arrival % count == index }

    /// The global arrival index of this segment's `k`-th arrival.
    public func globalIndex(_ k: Int) -> Int { k * count + index }

    /// How many of the global arrivals `0..<n` belong to this segment.
    public func arrivals(before n: Int) -> Int {
        n <= index ? 0 : (n - index + count - 1) / count
    }

    /// This segment's contiguous block of `accounts` (blocks of all segments of the same count are
    /// disjoint, cover the range, and differ in size by at most one); nil when the block is empty
    /// (fewer accounts than segments).
    public func share(of accounts: ClosedRange<Int>) -> ClosedRange<Int>? {
        let total = accounts.count
        let lower = accounts.lowerBound + total * index / count
        let upper = accounts.lowerBound + total * (index + 1) / count
        return lower < upper ? lower...(upper - 1) : nil
    }

    /// This segment's part of `total` (e.g. a session limit): parts of all segments of the same count
    /// add up to `total` and differ by at most one.
    public func share(ofCount total: Int) -> Int {
        total * (index + 1) / count - total * index / count
    }

    public var description: String { "\(index)/\(count)" }
}
