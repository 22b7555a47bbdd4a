import Foundation
import Testing

/// `xmppload check` and `xmppload plan` as a user runs them (no server needed).
@Suite struct CheckAndPlanCommandTests {
    static let shipped = ["login", "idle", "chat", "login-storm", "muc", "idle-soak", "soak-mixed", "compare"]
        .map { "profiles/\($0).yaml" }

    @Test func everyShippedProfileChecksOk() throws {
        let result = try CommandLineTests.xmppload(["check"] + Self.shipped, timeout: 30)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.components(separatedBy: "\n").filter { $0.hasPrefix("ok   ") }.count == Self.shipped.count)
    }

    @Test func checkReportsEveryProblemOfEveryFileAndExitsTwo() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("check-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = directory.appendingPathComponent("first.yaml")
        let second = directory.appendingPathComponent("second.yaml")
        try "steps: [ping, login]\n".write(to: first, atomically: true, encoding: .utf8)
        try "steps: [login, stay_online, {think: 1s}]\nload: {phases: [{rate: 0, duration: 1m}]}\n".write(
            to: second, atomically: true, encoding: .utf8)
        let result = try CommandLineTests.xmppload(["check", first.path, "profiles/login.yaml", second.path], timeout: 30)
        #expect(result.status == 2)
        #expect(result.output.contains("\(first.path):1:9: error: a ping step before login"))
        #expect(result.output.contains("ok   \(LocalServer.repositoryRoot.path)/profiles/login.yaml"))
        #expect(result.output.contains("\(second.path):1:29: error: this step never runs"))
        #expect(result.output.contains("\(second.path):2:24: error: rate must be greater than 0, got 0"))
        #expect(result.output.contains("3 problems found"))
    }

    @Test func planPrintsPhasesAndTheTimeTable() throws {
        let result = try CommandLineTests.xmppload(["plan", "profiles/login-storm.yaml", "--rows", "4"], timeout: 30)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("  2. ramp: 5/s→100/s over 2m  starts at 10s  arrivals 6300\n"))
        #expect(result.output.contains("total: 9350 sessions"))
        #expect(result.output.contains("   2m40s      9350"))
    }

    @Test func planFlagsOverrideTheProfileAndAreChecked() throws {
        let closed = try CommandLineTests.xmppload(
            ["plan", "profiles/chat.yaml", "--sessions", "2000", "--ramp", "20s", "--duration", "90s"], timeout: 30)
        #expect(closed.status == 0, "\(closed.output)")
        #expect(closed.output.contains("  1. closed: 2000 users, ramp 20s, 1m30s  starts at 0s  arrivals 2000"))
        let both = try CommandLineTests.xmppload(["plan", "profiles/chat.yaml", "--sessions", "5", "--rate", "3"], timeout: 30)
        #expect(both.status == 2)
        #expect(both.output.contains("exclude each other"))
        #expect(both.output.contains("--rate needs --duration"))
    }
}
