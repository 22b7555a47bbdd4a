import Testing

@testable import LoadResults

/// `--tolerance KEY=VALUE`: parsing, every problem at once, and the lookup order.
@Suite struct ToleranceTests {
    @Test(arguments: [
        (argument: "p99=5%", key: "p99", value: 5.0),
        (argument: "login.p50=10", key: "login.p50", value: 10),
        (argument: "login.sasl=12.5%", key: "login.sasl", value: 12.5),
        (argument: "error_rate=0.5pp", key: "error_rate", value: 0.5),
        (argument: "throughput = 3 %", key: "throughput", value: 3),
        (argument: "muc.message.p90=0", key: "muc.message.p90", value: 0),
    ])
    func validTolerancesParse(argument: String, key: String, value: Double) throws {
        #expect(try Tolerances.parse([argument]).overrides == [key: value])
    }

    @Test func everyBadToleranceIsReportedAtOnce() {
        do {
            _ = try Tolerances.parse(["p99", "p95=5%", "p99=-1%", "login.p50=fast", ".p50=1", "p50=5%"])
            Issue.record("bad tolerances were accepted")
        } catch {
            #expect(error.problems.count == 5, "\(error.problems)")
            #expect(error.problems[0].contains("expected KEY=VALUE"))
            #expect(error.problems[1].contains("unknown metric 'p95'"))
            #expect(error.problems[2].contains("not a non-negative number"))
            #expect(error.problems[3].contains("not a non-negative number"))
            #expect(error.problems[4].contains("unknown metric '.p50'"))
        }
    }

    @Test func lookupGoesFromTheExactKeyToTheStepToTheStatisticToTheDefault() throws {
        let tolerances = try Tolerances.parse(["p99=5%", "login.p99=7%", "login.sasl=9%", "throughput=2%"])
        #expect(tolerances.tolerance(for: .latency("login", "p99", 99)) == 7)
        #expect(tolerances.tolerance(for: .latency("message", "p99", 99)) == 5)
        #expect(tolerances.tolerance(for: .latency("login.sasl", "p50", 50)) == 9)
        #expect(tolerances.tolerance(for: .latency("message", "p50", 50)) == Tolerances.defaults["p50"])
        #expect(tolerances.tolerance(for: .messageThroughput) == 2)
        #expect(tolerances.tolerance(for: .loss) == Tolerances.defaults["loss"])
    }

    @Test(arguments: [
        (argument: "login.p50=10%,2ms", key: "login.p50", relative: 10.0 as Double?, floor: 2.0 as Double?),
        (argument: "p99=8ms", key: "p99", relative: nil, floor: 8),
        (argument: "login = 3 ms , 15 %", key: "login", relative: 15, floor: 3),
        (argument: "message.p90=0ms", key: "message.p90", relative: nil, floor: 0),
    ])
    func floorsParse(argument: String, key: String, relative: Double?, floor: Double?) throws {
        let tolerances = try Tolerances.parse([argument])
        #expect(tolerances.overrides[key] == relative)
        #expect(tolerances.floorOverrides[key] == floor)
    }

    @Test func aFloorIsForLatencyOnly() {
        do {
            _ = try Tolerances.parse(["error_rate=2ms", "throughput=1ms", "loss=1ms,0.5pp", "p50=fastms"])
            Issue.record("floors on rates were accepted")
        } catch {
            #expect(error.problems.count == 4, "\(error.problems)")
            #expect(error.problems[0].contains("latency only, not 'error_rate'"))
            #expect(error.problems[3].contains("not a non-negative number"))
        }
    }

    /// Floors look up like relative tolerances; the default floors are p50 1 ms, p90 2 ms, p99 5 ms;
    /// the tolerance judged is the larger of the relative one and the floor relative to the baseline.
    @Test(arguments: [
        (arguments: [String](), metric: CompareMetric.latency("login.connect", "p50", 50), baseline: 0.2, floor: 1.0 as Double?, effective: 500.0),
        ([], .latency("login", "p50", 50), 40, 1, 10),
        ([], .latency("login", "p99", 99), 20, 5, 25),
        ([], .latency("login", "p90", 90), 10, 2, 20),
        (["login=3ms"], .latency("login", "p99", 99), 20, 3, 20),
        (["login=3ms", "login.p99=10ms"], .latency("login", "p99", 99), 20, 10, 50),
        (["p50=0ms"], .latency("login.connect", "p50", 50), 0.2, 0, 10),
        ([], .errorRate, 1, nil, 1),
        ([], .loginThroughput, 100, nil, 5),
    ])
    func floorsLookUpAndWidenTheTolerance(arguments: [String], metric: CompareMetric, baseline: Double, floor: Double?, effective: Double) throws {
        let tolerances = try Tolerances.parse(arguments)
        #expect(tolerances.floor(for: metric) == floor)
        #expect(abs(tolerances.effectiveTolerance(for: metric, baseline: baseline) - effective) < 1e-9)
    }
}
