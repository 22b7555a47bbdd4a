import Foundation

/// A least-squares line through (x, y) points, with the 95 % confidence interval of its slope.
///
/// The interval is slope ± t(0.975, n−2) × SE, with SE = √(Σresidual² / (n−2) / Σ(x−x̄)²); the slope
/// is *significant* when that interval excludes 0. Needs at least 3 points with distinct x.
public struct TrendLine: Sendable, Equatable {
    public var slope: Double
    public var intercept: Double
    public var meanY: Double
    public var count: Int
    /// Half the width of the slope's 95 % confidence interval.
    public var slopeMargin: Double

    public init?(points: [(x: Double, y: Double)]) {
        let n = points.count
        guard n >= 3 else { return nil }
        let meanX = points.reduce(0) { $0 + $1.x } / Double(n)
        let meanY = points.reduce(0) { $0 + $1.y } / Double(n)
        let sxx = points.reduce(0) { $0 + ($1.x - meanX) * ($1.x - meanX) }
        guard sxx > 0 else { return nil }
        let sxy = points.reduce(0) { $0 + ($1.x - meanX) * ($1.y - meanY) }
        let slope = sxy / sxx
        let intercept = meanY - slope * meanX
        self.slope = slope
        self.intercept = intercept
        self.meanY = meanY
        count = n
        let residuals = points.reduce(0) { sum, point in
            let residual = point.y - (intercept + slope * point.x)
            return sum + residual * residual
        }
        let standardError = (residuals / Double(n - 2) / sxx).squareRoot()
        slopeMargin = Self.studentT975(degreesOfFreedom: n - 2) * standardError
    }

    /// True when the slope's 95 % confidence interval excludes 0.
    public var isSignificant: Bool { abs(slope) > slopeMargin }

    /// The slope relative to the mean (per unit of x); nil when the mean is 0.
    public var relativeSlope: Double? { meanY == 0 ? nil : slope / abs(meanY) }

    /// Two-sided 95 % quantile of Student's t (table to 30 degrees of freedom, then 1.96 + a small correction).
    static func studentT975(degreesOfFreedom df: Int) -> Double {
        let table: [Double] = [
            12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
            2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
            2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
        ]
        if df >= 1 && df <= table.count { return table[df - 1] }
        return 1.96 + 2.4 / Double(max(df, 1))
    }
}
