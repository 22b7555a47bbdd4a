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
}
