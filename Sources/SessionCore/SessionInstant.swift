/// A point on the run's monotonic clock: nanoseconds since the run's clock origin.
///
/// The one clock of a session: timeouts, think times, step timing and message stamps all read it. The
/// engine derives it from the event loop's `now` (so an `EmbeddedEventLoop`'s virtual time drives it in
/// pipeline tests); unit tests of `SessionMachine` pass plain values. Never wall-clock time.
public struct SessionInstant: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Nanoseconds since the run's clock origin (may be negative only for instants before the run).
    public var nanoseconds: Int64

    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    public static let zero = SessionInstant(nanoseconds: 0)

    public static func < (lhs: SessionInstant, rhs: SessionInstant) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    /// `instant + duration`, saturating instead of overflowing.
    public static func + (lhs: SessionInstant, rhs: Duration) -> SessionInstant {
        let sum = lhs.nanoseconds.addingReportingOverflow(rhs.nanosecondsClamped)
        return SessionInstant(nanoseconds: sum.overflow ? (rhs < .zero ? .min : .max) : sum.partialValue)
    }

    /// Nanoseconds from `earlier` to `self`, 0 when `earlier` is later (latencies are never negative).
    public func nanoseconds(since earlier: SessionInstant) -> UInt64 {
        nanoseconds > earlier.nanoseconds ? UInt64(nanoseconds - earlier.nanoseconds) : 0
    }

    /// As an unsigned stamp value (message stamps carry unsigned nanoseconds since the origin).
    public var stampNanoseconds: UInt64 { nanoseconds > 0 ? UInt64(nanoseconds) : 0 }

    public var description: String { "\(Double(nanoseconds) / 1e9)s" }
}

extension Duration {
    /// Whole nanoseconds, clamped to `Int64`.
    public var nanosecondsClamped: Int64 {
        let (seconds, attoseconds) = components
        let fromSeconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if fromSeconds.overflow { return seconds < 0 ? .min : .max }
        let sum = fromSeconds.partialValue.addingReportingOverflow(attoseconds / 1_000_000_000)
        return sum.overflow ? (seconds < 0 ? .min : .max) : sum.partialValue
    }
}
