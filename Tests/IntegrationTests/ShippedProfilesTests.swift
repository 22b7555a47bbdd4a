import Foundation
import LoadEngine
import LoadProfile
import LoadResults
import Testing

/// Every shipped profile runs for a few seconds against a real Prosody (with its MUC component), with
/// the load scaled down by flags: 20 users over 2 s, 12 s of load. `runEveryProfile` is the same run
/// for the other test servers (ejabberd, jabberd2), so the three servers are held to one standard.
@Suite(.serialized) struct ShippedProfilesTests {
    /// Every file in profiles/, in the order the table in the README lists them.
    static let names = [
        "login", "idle", "chat", "login-storm", "muc", "idle-soak", "soak-mixed", "soak-restart", "compare", "cluster-cross",
        "modern-client", "mobile-reconnect", "soak-overnight",
    ]

    /// One row of the profiles × servers table: what a scaled-down run of a shipped profile did.
    struct Row: CustomStringConvertible {
        var server: String
        var profile: String
        var summary: RunSummary
        var description: String {
            let messages = summary.messages
            return "\(server) \(profile): \(summary.sessions.started) started, \(summary.sessions.loggedIn) logged in, "
                + "\(summary.sessions.failed) failed; messages \(messages.sent) sent, \(messages.received) received, \(messages.lost) lost"
        }
    }

    /// Runs every shipped profile in process against one server (20 users over 2 s, `load` of load;
    /// `cluster-cross` sends to user1, a session of the same run) and checks each completes cleanly:
    /// every session logged in, none failed, messages sent and received where the profile sends.
    static func runEveryProfile(
        serverName: String, host: String, port: Int, domain: String, password: String,
        load: (String) -> Duration = { _ in .seconds(12) }
    ) async throws -> [Row] {
        var rows: [Row] = []
        for name in names {
            let path = LocalServer.repositoryRoot.appendingPathComponent("profiles/\(name).yaml").path
            let out = FileManager.default.temporaryDirectory
                .appendingPathComponent("xmppload-shipped-\(serverName)-\(name)-\(UUID().uuidString.prefix(6))").path
            defer { try? FileManager.default.removeItem(atPath: out) }
            var definition = try ProfileLoader.load(path: path)
            if name == "cluster-cross" { definition = try definition.overriding(VariableOverrides(parsing: ["peer=1"])) }
            let configuration = RunConfiguration(
                host: host, port: port, domain: domain, accounts: 1...20,
                password: password, insecure: true, outputDirectory: out, interval: .seconds(2))
            var plan = LoadPlan.closed(sessions: 20, ramp: .seconds(2), duration: load(name))
            plan.seed = definition.plan?.seed ?? 1
            let summary = try await LoadRun(configuration: configuration, definition: definition, plan: plan).run().summary
            let row = Row(server: serverName, profile: name, summary: summary)
            print("shipped-profiles: \(row)")
            rows.append(row)
            #expect(summary.sessions.loggedIn >= 20, "\(row)")
            #expect(summary.sessions.failed == 0, "\(row): errors \(summary.errors)")
            // Only messages to receivers that logged out at the stop may bounce.
            #expect(Set(summary.errors.keys).isSubset(of: ["message-service-unavailable"]), "\(row): \(summary.errors)")
            #expect(summary.latencyMilliseconds["login"]?.count ?? 0 >= 20, "\(row)")
            // Every profile whose steps send one-to-one messages within the load (found in the profile,
            // not by name: chat, compare, cluster-cross, soak-mixed, modern-client, and any added later;
            // soak-restart's first message is 20-40 s in, past this run) sent and received some.
            let firstMessage = definition.profiles.compactMap { Self.earliestMessage($0.profile.steps) }.min()
            if let firstMessage, firstMessage + .seconds(2) < load(name) {
                #expect(summary.messages.sent > 0 && summary.messages.received > 0, "\(row)")
                #expect(summary.messages.received + summary.messages.lost >= summary.messages.sent / 2, "\(row)")
            }
            switch name {
            case "modern-client":
                // Each extension step is measured where the server has it, and said where it has not.
                let said = Set(summary.notices?.map(\.kind) ?? [])
                for (metric, notice) in [
                    ("carbons.enable", "carbons-unsupported"), ("mam.query", "mam-unsupported"), ("pep.publish", "pep-unsupported"),
                ] {
                    #expect((summary.latencyMilliseconds[metric]?.count ?? 0) >= 20 || said.contains(notice), "\(row): \(metric) \(said)")
                }
            case "muc":
                #expect(summary.latencyMilliseconds["muc.join"]?.count == 20, "\(row): \(summary.latencyMilliseconds.keys)")
                // 12 s of load is enough to join and (after 10 s) start sending; receipts arrive (a groupchat in
                // flight when the stop logs its receivers out is a true miss, hence not exactly 1).
                #expect(!summary.rooms.isEmpty && summary.rooms.values.allSatisfy { $0.completeness >= 0.95 }, "\(row): \(summary.rooms)")
            case "idle-soak", "soak-restart":
                #expect(summary.latencyMilliseconds["roster.get"]?.count ?? 0 >= 20, "\(row)")
            default:
                break
            }
            #expect(FileManager.default.fileExists(atPath: out + "/report.html"), "\(row)")
        }
        return rows
    }

    /// The earliest a session of `steps` can send its first one-to-one message (the shortest think
    /// times before it, loops and branches included); nil when it never sends one.
    static func earliestMessage(_ steps: [Step]) -> Duration? {
        var elapsed = Duration.zero
        for step in steps {
            switch step.action {
            case .message: return elapsed
            case .loop(_, let body): if let found = earliestMessage(body) { return elapsed + found }
            case .choose(let branches): if let found = branches.compactMap({ earliestMessage($0.steps) }).min() { return elapsed + found }
            case .think(let think): elapsed += Self.shortest(think)
            default: break
            }
        }
        return nil
    }

    static func shortest(_ think: ThinkTime) -> Duration {
        switch think {
        case .constant(let duration): return duration
        case .uniform(let low, _): return low
        case .exponential: return .zero
        }
    }

    @Test func theMessageCheckFindsEveryShippedProfileThatSendsMessages() throws {
        var earliest: [String: Duration] = [:]
        for name in Self.names {
            let definition = try ProfileLoader.load(path: LocalServer.repositoryRoot.appendingPathComponent("profiles/\(name).yaml").path)
            earliest[name] = definition.profiles.compactMap { Self.earliestMessage($0.profile.steps) }.min()
        }
        for name in ["chat", "compare", "cluster-cross"] { #expect((earliest[name] ?? .seconds(999)) < .seconds(10), "\(name): \(earliest)") }
        #expect(earliest["login"] == nil && earliest["idle"] == nil)
        #expect(earliest["soak-restart"] == .seconds(20), "its first message is 20-40 s in")
    }

    @Test(.timeLimit(.minutes(6)))
    func everyShippedProfileRunsCleanly() async throws {
        try await LocalServer.with(accounts: 40) { server in
            _ = try await Self.runEveryProfile(
                serverName: "prosody", host: server.host, port: server.port, domain: server.domain, password: server.password)
        }
    }
}
