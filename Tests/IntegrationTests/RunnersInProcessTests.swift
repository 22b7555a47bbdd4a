import Foundation
import LoadEngine
import LoadProfile
import LoadResults
import LoadRunners
import Testing

/// The capacity search and `ab`'s rounds as library types, run inside the test process against a
/// real Prosody (no `xmppload` binary): a tiny search finds a knee and writes its files; two `ab`
/// rounds against the same server produce four judged runs that `Comparison` finds comparable.
@Suite(.serialized) struct RunnersInProcessTests {
    static let profile = """
        name: runners-login
        steps: [login, logout]
        """

    static func context(_ server: LocalServer) -> RunOptionsContext {
        RunOptionsContext(
            server: nil, domain: nil, password: nil, accounts: nil, environment: [:], now: Date(), terminal: false,
            commandLine: ["xmppload-test"], processors: 2)
    }

    static func options(_ server: LocalServer, out: String) -> RunOptions {
        var options = RunOptions()
        options.servers = ["127.0.0.1:\(server.port)"]
        options.domain = server.domain
        options.accounts = "1-\(server.accounts)"
        options.password = server.password
        options.insecure = true
        options.tls = "none"
        options.interval = "500ms"
        options.messageGrace = "200ms"
        options.out = out
        options.seed = 7
        return options
    }

    @Test(.timeLimit(.minutes(3)))
    func aCapacitySearchRunsInProcessAndWritesItsFiles() async throws {
        try await LocalServer.with(accounts: 100) { server in
            let out = VerdictCommandTests.temporaryPath("runners-capacity")
            defer { try? FileManager.default.removeItem(atPath: out) }
            let definition = try ProfileLoader.load(yaml: Self.profile, file: "runners-login.yaml")
            var options = Self.options(server, out: out)
            options.rate = 4
            options.duration = "3s"
            var resolved = try RunOptionsResolver(options: options, context: Self.context(server)).resolve(definition)
            resolved.configuration.interval = .milliseconds(500)
            let rules = [try Threshold.parse("login.p99 < 5s")]
            let setup = CapacitySetup(
                options: resolved, rules: rules, dimension: .arrivalRate,
                settings: CapacitySearch.Settings(start: 4, max: 8, resolution: 0.2),
                warmup: .seconds(1), hold: .seconds(2), interval: .milliseconds(500), seed: 7, gracefulStop: .seconds(5))
            let directory = ResultsDirectory(path: out)
            try directory.create()
            let runner = CapacityRunner(setup: setup, configuration: resolved.configuration, directory: directory, profileName: "runners-login")
            let result = try await runner.search()
            #expect(!result.steps.isEmpty)
            #expect(result.steps.first?.asked == 4)
            #expect(result.steps.allSatisfy { FileManager.default.fileExists(atPath: "\(out)/\($0.directory)/summary.json") })
            #expect(CapacityResult.read(from: directory) != nil, "summary.json carries the capacity block")
            #expect(FileManager.default.fileExists(atPath: "\(out)/report.html"))
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func abRoundsRunInProcessAndAreComparable() async throws {
        try await LocalServer.with(accounts: 100) { server in
            let out = VerdictCommandTests.temporaryPath("runners-ab")
            defer { try? FileManager.default.removeItem(atPath: out) }
            let definition = try ProfileLoader.load(yaml: Self.profile, file: "runners-login.yaml")
            var options = Self.options(server, out: out)
            options.sessions = 10
            options.ramp = "1s"
            let side = ["127.0.0.1:\(server.port)"]
            let plan = ABPlan(
                rounds: 2, baseline: ABPlan.Side(role: "baseline", label: "a", servers: side),
                candidate: ABPlan.Side(role: "candidate", label: "b", servers: side), out: out)
            let launcher = InProcessRunLauncher(options: options, context: Self.context(server), definition: definition)
            let runs = try await ABRunner(plan: plan, launcher: launcher).run()
            #expect(runs.baseline.count == 2 && runs.candidate.count == 2)
            let comparison = Comparison.make(baseline: runs.baseline, candidate: runs.candidate, paired: true)
            #expect(comparison.problems.isEmpty, "\(comparison.problems)")
            #expect(!comparison.rows.isEmpty)
            for run in runs.baseline + runs.candidate {
                #expect(run.total.sessionsLoggedIn == 10 && run.total.sessionsFailed == 0, "\(run.directory)")
            }
            let tags = try ResultsDirectory(path: plan.directory(round: 2, side: plan.candidate)).readManifest().tags
            #expect(tags["ab-round"] == "2" && tags["ab-side"] == "candidate")
        }
    }
}
