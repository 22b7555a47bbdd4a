import Foundation

/// A pause between steps: constant, uniform in a range, or exponential with a mean (optionally
/// capped). Sampling uses the session's own seeded generator, so a run with the same seed pauses the
/// same way regardless of thread scheduling.
public enum ThinkTime: Sendable, Equatable {
    case constant(Duration)
    case uniform(Duration, Duration)
    case exponential(mean: Duration, max: Duration?)

    public func sample(using generator: inout some RandomNumberGenerator) -> Duration {
        switch self {
        case .constant(let duration):
            return duration
        case .uniform(let low, let high):
            let lowNanos = low.nanoseconds
            let highNanos = high.nanoseconds
            guard highNanos > lowNanos else { return low }
            return .nanoseconds(Int64.random(in: lowNanos...highNanos, using: &generator))
        case .exponential(let mean, let cap):
            // Inverse transform: -mean * ln(1 - U), U in [0, 1).
            let u = Double.random(in: 0..<1, using: &generator)
            var nanos = -Double(mean.nanoseconds) * log1p(-u)
            if let cap { nanos = min(nanos, Double(cap.nanoseconds)) }
            // The tail reaches ~37 means; keep a long mean's rare sample inside Int64 nanoseconds.
            return .nanoseconds(Int64(min(nanos, 9.0e18)))
        }
    }

    /// The expected pause, for `plan`.
    public var mean: Duration {
        switch self {
        case .constant(let duration): return duration
        case .uniform(let low, let high): return .nanoseconds((low.nanoseconds + high.nanoseconds) / 2)
        case .exponential(let mean, let cap):
            guard let cap else { return mean }
            // E[min(X, c)] = m (1 - e^{-c/m}) for an exponential X with mean m.
            let m = Double(mean.nanoseconds)
            let c = Double(cap.nanoseconds)
            return .nanoseconds(Int64(m * (1 - exp(-c / m))))
        }
    }
}

extension Duration {
    /// Whole nanoseconds (saturating).
    public var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return scaled &+ attoseconds / 1_000_000_000
    }

    /// Seconds as a Double.
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
