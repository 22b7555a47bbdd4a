import Foundation
import LoadEngine
import LoadProfile
import LoadResults
import Testing

/// Every shipped profile runs for a few seconds against a real Prosody (with its MUC component), with
/// the load scaled down by flags: 20 users over 2 s, 12 s of load.
@Suite(.serialized) struct ShippedProfilesTests {
    static let names = ["login", "idle", "chat", "login-storm", "muc", "idle-soak", "soak-mixed", "compare"]

    @Test(.timeLimit(.minutes(5)))
    func everyShippedProfileRunsCleanly() async throws {
        try await LocalServer.with(accounts: 40) { server in
            for name in Self.names {
                let path = LocalServer.repositoryRoot.appendingPathComponent("profiles/\(name).yaml").path
                let out = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-shipped-\(name)-\(UUID().uuidString.prefix(6))")
                    .path
                defer { try? FileManager.default.removeItem(atPath: out) }
                let definition = try ProfileLoader.load(path: path)
                let configuration = RunConfiguration(
                    host: server.host, port: server.port, domain: server.domain, accounts: 1...20,
                    password: server.password, insecure: true, outputDirectory: out, interval: .seconds(2))
                var plan = LoadPlan.closed(sessions: 20, ramp: .seconds(2), duration: .seconds(12))
                plan.seed = definition.plan?.seed ?? 1
                let summary = try await LoadRun(configuration: configuration, definition: definition, plan: plan).run()
                #expect(summary.sessions.loggedIn >= 20, "\(name): \(summary.sessions)")
                #expect(summary.sessions.failed == 0, "\(name): errors \(summary.errors)")
                // Only messages to receivers that logged out at the stop may bounce.
                #expect(Set(summary.errors.keys).isSubset(of: ["message-service-unavailable"]), "\(name): \(summary.errors)")
                #expect(summary.latencyMilliseconds["login"]?.count ?? 0 >= 20, "\(name)")
                switch name {
                case "chat", "compare":
                    #expect(summary.messages.sent > 0 && summary.messages.received > 0, "\(name): \(summary.messages)")
                case "muc":
                    #expect(summary.latencyMilliseconds["muc.join"]?.count == 20, "muc: \(summary.latencyMilliseconds.keys)")
                    // 12 s of load is enough to join and (after 10 s) start sending; receipts arrive (a groupchat in
                    // flight when the stop logs its receivers out is a true miss, hence not exactly 1).
                    #expect(!summary.rooms.isEmpty && summary.rooms.values.allSatisfy { $0.completeness >= 0.95 }, "muc: \(summary.rooms)")
                case "idle-soak":
                    #expect(summary.latencyMilliseconds["roster.get"]?.count ?? 0 >= 20)
                default:
                    break
                }
                #expect(FileManager.default.fileExists(atPath: out + "/report.html"), "\(name)")
            }
        }
    }
}
