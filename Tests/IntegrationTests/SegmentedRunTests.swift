import Foundation
import LoadResults
import Testing

/// Many generators acting as one run (issue 15): three processes with `--segment 0/3`, `1/3`, `2/3`
/// (one `--run-id`, one `--start-at`) against a private Prosody start the same sessions on the same
/// accounts and give the same totals as one process running the whole plan; `to: random` sends
/// messages across generators, and `report DIR DIR DIR` counts them as delivered.
@Suite(.serialized) struct SegmentedRunTests {
    /// Every session logs in, announces itself, waits until the others are online (the whole run's
    /// 30 sessions arrive within 2 s), sends 4 messages to random online sessions of the whole run and
    /// stays until every message has arrived.
    static let profile = """
        name: crossgen
        steps:
          - login
          - presence: available
          - think: 5s
          - message: {to: random, body_size: 40, count: 4, interval: 500ms}
          - think: 6s
          - logout
        """
    static let sessions = 30
    static let messagesPerSession: UInt64 = 4

    static func arguments(server: LocalServer, profile: String, out: String, runID: String?) -> [String] {
        [
            "run", profile, "--server", "127.0.0.1:\(server.port)", "--domain", "load.test",
            "--accounts", "1-\(sessions)", "--password", "secret", "--sessions", String(sessions), "--ramp", "2s",
            "--insecure", "--plain", "--interval", "1s", "--seed", "7", "--out", out,
        ] + (runID.map { ["--run-id", $0] } ?? [])
    }

    /// `report DIR…` as JSON, read back as a summary.
    static func report(_ directories: [String], base: String) throws -> RunSummary {
        let merged = try CommandLineTests.xmppload(["report"] + directories + ["--json", "--html", "\(base)/merged.html"])
        #expect(merged.status == 0, "\(merged.output)")
        try FileManager.default.createDirectory(atPath: "\(base)/merged", withIntermediateDirectories: true)
        try Data(merged.output.utf8).write(to: URL(fileURLWithPath: "\(base)/merged/summary.json"))
        return try ResultsDirectory(path: "\(base)/merged").readSummary()
    }

    @Test(.timeLimit(.minutes(4)))
    func threeSegmentsAreOneRunWithMessagesAcrossGenerators() throws {
        let server = try LocalServer.start(accounts: Self.sessions)
        defer { server.stop() }
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-gens-\(UUID().uuidString.prefix(6))").path
        defer { try? FileManager.default.removeItem(atPath: base) }
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        let profile = "\(base)/crossgen.yaml"
        try Data(Self.profile.utf8).write(to: URL(fileURLWithPath: profile))

        // Three generators of one run, started together at one absolute --start-at and no --run-id:
        // each derives the same run id from the plan, so their stamped messages count across them.
        let segmented = (0..<3).map { "\(base)/segment-\($0)" }
        let startAt = ISO8601DateFormatter().string(from: Date().addingTimeInterval(4))
        let children = try (0..<3).map { index in
            try ChildProcess.spawn(
                CommandLineTests.binary,
                Self.arguments(server: server, profile: profile, out: segmented[index], runID: nil)
                    + ["--segment", "\(index)/3", "--start-at", startAt])
        }
        defer { children.forEach { $0.removeLog() } }
        for child in children {
            #expect(child.wait(timeout: 120) == 0, "\(child.output)")
        }
        // Then the same plan in one process (the same accounts: not at the same time).
        let whole = "\(base)/whole"
        let single = try CommandLineTests.xmppload(Self.arguments(server: server, profile: profile, out: whole, runID: "gens-whole"))
        #expect(single.status == 0, "\(single.output)")

        // Each generator ran its third, on its block of the accounts; together they are the whole range.
        let derivedID = try ResultsDirectory(path: segmented[0]).readManifest().runID
        #expect(derivedID.hasPrefix("plan-"), "\(derivedID)")
        for (index, accounts) in ["user1-10", "user11-20", "user21-30"].enumerated() {
            let directory = ResultsDirectory(path: segmented[index])
            let summary = try directory.readSummary()
            #expect(summary.sessions.started == 10 && summary.sessions.loggedIn == 10, "segment \(index): \(summary.sessions)")
            #expect(summary.ledger?.segments == [index] && summary.ledger?.segmentCount == 3)
            let manifest = try directory.readManifest()
            #expect(manifest.segment == "\(index)/3" && manifest.accounts == accounts && manifest.runID == derivedID)
            #expect(manifest.settings?.runIDSource == "plan")
        }
        #expect(try ResultsDirectory(path: whole).readManifest().accounts == "user1-30")

        let merged = try Self.report(segmented, base: base)
        let one = try ResultsDirectory(path: whole).readSummary()
        let total = UInt64(Self.sessions) * Self.messagesPerSession
        for summary in [merged, one] {
            #expect(summary.sessions.started == UInt64(Self.sessions))
            #expect(summary.sessions.loggedIn == UInt64(Self.sessions))
            #expect(summary.sessions.failed == 0)
            #expect(summary.latencyMilliseconds["login"]?.count == UInt64(Self.sessions))
            #expect(summary.messages.sent == total, "\(summary.messages) \(summary.errors)")
            #expect(summary.messages.received == total, "\(summary.messages) \(summary.errors)")
            #expect(summary.messages.lost == 0 && summary.messages.duplicated == 0, "\(summary.messages)")
            #expect(summary.latencyMilliseconds["message"]?.count == total)
        }
        // Messages crossed generators (random targets over the whole run: about two thirds), and the
        // reconciled ledger counts every one as delivered.
        let ledger = try #require(merged.ledger)
        #expect(ledger.segments == [0, 1, 2])
        #expect(ledger.delivered == total && ledger.lost == 0)
        #expect(ledger.crossed > 0 && ledger.crossed < total, "\(ledger)")
        #expect(merged.runID == derivedID)

        // Each generator measured its clock against the server's XEP-0202 time (Prosody answers whole
        // seconds). Generators and server share this machine's clock: the true offset is 0, and it
        // lies within the reported uncertainty.
        for directory in segmented {
            let clock = try #require(try ResultsDirectory(path: directory).readSummary().clock)
            #expect(clock.samples == 5 && clock.uncertaintyMilliseconds <= 1000, "\(clock)")
            #expect(abs(clock.offsetMilliseconds) <= clock.uncertaintyMilliseconds + 5, "\(clock)")
        }
        let text = try CommandLineTests.xmppload(["report"] + segmented + ["--html", "\(base)/merged-text.html"])
        #expect(text.status == 0, "\(text.output)")
        #expect(text.output.contains("generators segments 0,1,2 of 3: chat sent \(total)  delivered \(total) ("), "\(text.output)")
        #expect(text.output.contains("clocks vs server (XEP-0202): 0/3 "), "\(text.output)")
        print(text.output)
    }
}
