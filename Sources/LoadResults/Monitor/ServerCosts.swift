/// What the load cost one monitored server process, per unit of load, from the same run: CPU per
/// login and per message, and resident memory per online session — marginal costs, from regressions
/// over the run's intervals, so the server's idle CPU and its fixed memory do not count.
///
/// - **CPU**: per interval, the process's CPU seconds per second against logins per second and
///   messages per second (least squares with an intercept, `LeastSquares`): the coefficients are CPU
///   seconds per login and per message, the intercept the CPU the server spends with no work
///   (`idleCPUPercent`, of one core). A kind of work that did not vary over the run is left out of
///   the fit; when logins and messages rose and fell together their costs cannot be told apart and
///   neither is given (`note` says so).
/// - **Memory**: resident bytes at each interval's end against sessions online then: the slope is
///   bytes per online session. Needs the sessions online to span at least `minimumSessionSpan`.
///
/// Only intervals where the source has a complete sample count (no gap, no restart inside); at least
/// `regressors + 3` of them. A negative slope (noise larger than the cost) is not given either; a
/// fit with R² under `weakFit` is given with a note. Costs read best from a run that does not
/// saturate the server (a saturated server's CPU is capped and its backlog moves work between
/// intervals) on a host with CPU to spare.
public struct ServerCosts: Sendable, Equatable, Codable {
    /// The source's label.
    public var source: String
    /// Marginal CPU per successful login, in milliseconds of CPU.
    public var cpuPerLoginMilliseconds: Double?
    /// Marginal CPU per message sent, in milliseconds of CPU.
    public var cpuPerMessageMilliseconds: Double?
    /// The fit's intercept: CPU with no logins and no messages, in percent of one core.
    public var idleCPUPercent: Double?
    /// R² of the CPU fit.
    public var cpuFitR2: Double?
    /// Marginal resident memory per online session, in bytes.
    public var rssPerSessionBytes: Double?
    /// R² of the memory fit.
    public var rssFitR2: Double?
    /// Intervals the fits used.
    public var intervalsUsed: Int
    /// Why a figure is missing, for people; nil when every figure is given.
    public var note: String?

    /// Below this R² a fit's figure is given with a note that it is rough.
    public static let weakFit = 0.5

    /// Sessions online must vary by at least this many over the used intervals for a memory slope.
    public static let minimumSessionSpan = 10.0

    enum CodingKeys: String, CodingKey {
        case source
        case cpuPerLoginMilliseconds = "cpu_per_login_ms"
        case cpuPerMessageMilliseconds = "cpu_per_message_ms"
        case idleCPUPercent = "idle_cpu_percent"
        case cpuFitR2 = "cpu_fit_r2"
        case rssPerSessionBytes = "rss_per_session_bytes"
        case rssFitR2 = "rss_fit_r2"
        case intervalsUsed = "intervals_used"
        case note
    }

    /// The costs of process source `label` over a run: `load` and `readings` are the same intervals in
    /// the same order (`MonitorAlignment`). Nil when the source never had a process sample.
    public static func estimate(source label: String, load: [LoadPoint], readings: [MonitorReading?]) -> ServerCosts? {
        var used: [(point: LoadPoint, sample: ProcessSample)] = []
        for (point, reading) in zip(load, readings) {
            guard let sample = reading?.process, sample.partial != true, sample.seconds > 0.5, point.seconds > 0.5 else { continue }
            used.append((point, sample))
        }
        guard !used.isEmpty else { return nil }
        var costs = ServerCosts(source: label, intervalsUsed: used.count)
        var notes: [String] = []

        // CPU: cpu s/s = idle + perLogin × logins/s + perMessage × messages/s.
        let loginRates = used.map { $0.point.logins / $0.point.seconds }
        let messageRates = used.map { $0.point.messages / $0.point.seconds }
        let varies = { (values: [Double]) -> Bool in (values.max() ?? 0) - (values.min() ?? 0) > 1e-9 }
        var columns: [(name: String, values: [Double])] = []
        if varies(loginRates) { columns.append(("login", loginRates)) }
        if varies(messageRates) { columns.append(("message", messageRates)) }
        let cpuRates = used.map { $0.sample.cpuSeconds / $0.sample.seconds }
        if columns.count == 2, abs(correlation(loginRates, messageRates)) > 0.95 {
            notes.append("logins and messages rose and fell together: their CPU costs cannot be told apart")
            columns = []
        }
        if columns.isEmpty {
            if notes.isEmpty { notes.append("neither logins nor messages varied over the run") }
        } else {
            let rows = used.indices.map { index in (x: columns.map { $0.values[index] }, y: cpuRates[index]) }
            if let fit = LeastSquares.fit(rows) {
                costs.idleCPUPercent = max(0, fit.intercept) * 100
                costs.cpuFitR2 = fit.r2
                if fit.r2 < weakFit {
                    notes.append("the CPU fit is weak (R² \(String(format: "%.2f", fit.r2))): the server's CPU followed more than this load")
                }
                for (column, coefficient) in zip(columns, fit.coefficients) {
                    guard coefficient > 0 else {
                        notes.append("CPU per \(column.name) is lost in the noise (negative slope)")
                        continue
                    }
                    if column.name == "login" { costs.cpuPerLoginMilliseconds = coefficient * 1000 }
                    if column.name == "message" { costs.cpuPerMessageMilliseconds = coefficient * 1000 }
                }
            } else {
                notes.append("too few intervals (\(used.count)) for the CPU fit")
            }
        }

        // Memory: rss = fixed + perSession × online.
        let online = used.map(\.point.online)
        if (online.max() ?? 0) - (online.min() ?? 0) >= minimumSessionSpan,
            let fit = LeastSquares.fit(used.map { (x: [$0.point.online], y: Double($0.sample.rssBytes)) })
        {
            if fit.coefficients[0] > 0 {
                costs.rssPerSessionBytes = fit.coefficients[0]
                costs.rssFitR2 = fit.r2
                if fit.r2 < weakFit {
                    notes.append(
                        "the memory fit is weak (R² \(String(format: "%.2f", fit.r2))): a garbage collector's cycles, or memory kept after logouts")
                }
            } else {
                notes.append("memory per session is lost in the noise (negative slope)")
            }
        } else {
            notes.append("sessions online varied too little (or too few intervals) for memory per session")
        }
        costs.note = notes.isEmpty ? nil : notes.joined(separator: "; ")
        return costs
    }

    init(source: String, intervalsUsed: Int) {
        self.source = source
        self.intervalsUsed = intervalsUsed
    }

    public init(
        source: String, cpuPerLoginMilliseconds: Double?, cpuPerMessageMilliseconds: Double?, idleCPUPercent: Double?,
        cpuFitR2: Double?, rssPerSessionBytes: Double?, rssFitR2: Double?, intervalsUsed: Int, note: String?
    ) {
        self.source = source
        self.cpuPerLoginMilliseconds = cpuPerLoginMilliseconds
        self.cpuPerMessageMilliseconds = cpuPerMessageMilliseconds
        self.idleCPUPercent = idleCPUPercent
        self.cpuFitR2 = cpuFitR2
        self.rssPerSessionBytes = rssPerSessionBytes
        self.rssFitR2 = rssFitR2
        self.intervalsUsed = intervalsUsed
        self.note = note
    }

    /// Pearson's correlation (0 when either side is constant).
    static func correlation(_ a: [Double], _ b: [Double]) -> Double {
        let n = Double(a.count)
        guard n > 1 else { return 0 }
        let meanA = a.reduce(0, +) / n
        let meanB = b.reduce(0, +) / n
        var covariance = 0.0
        var varianceA = 0.0
        var varianceB = 0.0
        for (x, y) in zip(a, b) {
            covariance += (x - meanA) * (y - meanB)
            varianceA += (x - meanA) * (x - meanA)
            varianceB += (y - meanB) * (y - meanB)
        }
        guard varianceA > 0, varianceB > 0 else { return 0 }
        return covariance / (varianceA * varianceB).squareRoot()
    }
}
