/// Ordinary least squares with an intercept, for a handful of regressors (the server's costs): plain
/// normal equations solved by Gaussian elimination with partial pivoting. Pure.
///
/// `fit` returns nil when there are fewer than `regressors + 3` rows, or the regressors are (nearly)
/// collinear or constant — an estimate would then be arbitrary.
public enum LeastSquares {
    /// The intercept, one coefficient per regressor, and R² (1 − residual / total sum of squares; 0
    /// when y is constant).
    public struct Fit: Sendable, Equatable {
        public var intercept: Double
        public var coefficients: [Double]
        public var r2: Double
    }

    public static func fit(_ rows: [(x: [Double], y: Double)]) -> Fit? {
        guard let width = rows.first?.x.count, rows.allSatisfy({ $0.x.count == width }) else { return nil }
        let n = rows.count
        guard n >= width + 3 else { return nil }
        // Centre the columns: better conditioned, and collinearity shows as a tiny pivot.
        let xMeans = (0..<width).map { j in rows.map { $0.x[j] }.reduce(0, +) / Double(n) }
        let yMean = rows.map(\.y).reduce(0, +) / Double(n)
        var matrix = [[Double]](repeating: [Double](repeating: 0, count: width + 1), count: width)
        var scale = [Double](repeating: 0, count: width)
        for row in rows {
            for j in 0..<width {
                let xj = row.x[j] - xMeans[j]
                scale[j] += xj * xj
                for k in 0..<width { matrix[j][k] += xj * (row.x[k] - xMeans[k]) }
                matrix[j][width] += xj * (row.y - yMean)
            }
        }
        guard scale.allSatisfy({ $0 > 0 }) else { return nil }
        // Gaussian elimination; a pivot below 1e-6 of its column's own scale means collinear.
        for column in 0..<width {
            guard let pivotRow = (column..<width).max(by: { abs(matrix[$0][column]) < abs(matrix[$1][column]) }) else { return nil }
            matrix.swapAt(column, pivotRow)
            let pivot = matrix[column][column]
            guard abs(pivot) > 1e-6 * scale[column] else { return nil }
            for row in 0..<width where row != column {
                let factor = matrix[row][column] / pivot
                if factor == 0 { continue }
                for k in column...width { matrix[row][k] -= factor * matrix[column][k] }
            }
        }
        let coefficients = (0..<width).map { matrix[$0][width] / matrix[$0][$0] }
        let intercept = yMean - zip(coefficients, xMeans).map { $0 * $1 }.reduce(0, +)
        var residual = 0.0
        var total = 0.0
        for row in rows {
            let predicted = intercept + zip(coefficients, row.x).map { $0 * $1 }.reduce(0, +)
            residual += (row.y - predicted) * (row.y - predicted)
            total += (row.y - yMean) * (row.y - yMean)
        }
        return Fit(intercept: intercept, coefficients: coefficients, r2: total > 0 ? max(0, 1 - residual / total) : 0)
    }
}
