import Foundation
import LoadResults
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `scripts/servers` and `xmppload ab` between two real builds of one server: Debian 12's Prosody
/// 0.12.3 and Prosody 13.0.1 from bookworm-backports (unpacked into the repository's private root by
/// `scripts/install-deps --server-builds`, which `up --install` runs when it is missing — a fresh
/// clone needs nothing by hand). A short `ab` (3 rounds of 20 logins) must run both sides, find them
/// comparable, give every judged row an interval and name both versions in the manifests; which
/// build wins is not asserted. Also: the script's refusals (unknown build, port in use, ab against a
/// build that is not running) and that `down` stops exactly the PIDs `up` reported.
@Suite(.serialized) struct ServerBuildsTests {
    static func servers(_ arguments: [String], timeout: Double = 300) throws -> CommandLineTests.Result {
        try ServerBuildsScript.run(arguments, timeout: timeout)
    }

    static func withBuilds<T>(_ body: (String) throws -> T) throws -> T {
        try ServerBuildsScript.withBuilds(prefix: "xmppload-builds", body)
    }

    static func up(_ build: String, base: String, accounts: Int) throws -> (path: String, values: [String: String]) {
        try ServerBuildsScript.up(build, base: base, accounts: accounts)
    }

    /// Whether the process runs: a zombie (stopped, not yet reaped by whoever inherited it — PID 1
    /// here reaps slowly) counts as gone, as `scripts/servers`' own `pid_alive` does.
    static func alive(_ pid: String) -> Bool {
        guard let id = Int32(pid), kill(id, 0) == 0 else { return false }
        guard let stat = try? String(contentsOfFile: "/proc/\(id)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return true }
        return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first != "Z"
    }

    @Test(.timeLimit(.minutes(4)))
    func abBetweenProsody012And13RunsBothSidesAndNamesBothVersions() throws {
        try Self.withBuilds { base in
            let old = try Self.up("prosody@0.12", base: base, accounts: 20)
            let new = try Self.up("prosody@13", base: base, accounts: 20)
            #expect(old.values["XMPPLOAD_SERVER_BUILD"] == "prosody@0.12")
            #expect(new.values["XMPPLOAD_SERVER_VERSION"]?.hasPrefix("13.") == true, "\(new.values)")
            #expect(old.values["XMPPLOAD_SERVER_NAME"] == "lua5.4" && new.values["XMPPLOAD_SERVER_NAME"] == "lua5.4")
            #expect(old.values["XMPPLOAD_PORT"] != new.values["XMPPLOAD_PORT"])

            let list = try Self.servers(["list", "--dir", base])
            for build in ["prosody@0.12", "prosody@13"] {
                let row = list.output.split(separator: "\n").first { $0.hasPrefix(build + " ") }.map(String.init) ?? ""
                #expect(
                    row.contains("running") && row.contains(":" + ((build == "prosody@13" ? new : old).values["XMPPLOAD_PORT"] ?? "?")),
                    "\(list.output)")
            }
            let diff = try Self.servers(["diff", "prosody@0.12", "prosody@13", "--dir", base])
            #expect(diff.status == 0 && diff.output.contains("software:") && diff.output.contains("identical"), "\(diff.output)")

            // Three short rounds of the shipped login profile over STARTTLS with SCRAM-SHA-1.
            let out = base + "/ab"
            var result = try CommandLineTests.xmppload(
                [
                    "ab", "profiles/login.yaml", "--baseline-server", "127.0.0.1:\(old.values["XMPPLOAD_PORT"] ?? "")",
                    "--candidate-server", "127.0.0.1:\(new.values["XMPPLOAD_PORT"] ?? "")", "--baseline-label", "prosody@0.12",
                    "--candidate-label", "prosody@13", "--rounds", "3", "--out", out, "--server-env", old.path, "--insecure",
                    "--sessions", "20", "--ramp", "2s", "--interval", "1s", "--resamples", "300", "--tls", "starttls", "--sasl",
                    "SCRAM-SHA-1",
                ], timeout: 180)
            if result.status == 4 {
                // A shared CI machine may saturate the generator; any other reason fails the test.
                let reasons = result.output.split(separator: "\n").filter { $0.hasPrefix("  - ") }
                #expect(!reasons.isEmpty && reasons.allSatisfy { $0.contains("saturated") }, "\(result.output)")
                result = try CommandLineTests.xmppload(
                    ["compare", "--paired", "--force", "--json", "--resamples", "300", "--baseline"] + CompareTests.sides(out, "baseline")
                        + ["--candidate"] + CompareTests.sides(out, "candidate"), timeout: 120)
                try Data(result.output.utf8).write(to: URL(fileURLWithPath: out + "/ab.json"))
            }
            #expect([0, 3].contains(result.status), "\(result.output)")

            // Both sides ran every round to the end.
            for side in ["baseline", "candidate"] {
                for directory in CompareTests.sides(out, side) {
                    let summary = try ResultsDirectory(path: directory).readSummary()
                    #expect(summary.sessions.loggedIn == 20 && summary.sessions.failed == 0, "\(directory)")
                    let facts = try ResultsDirectory(path: directory).readManifest().serverFacts
                    let expected = side == "baseline" ? "0.12." : "13."
                    #expect(
                        facts?.softwareName == "Prosody" && facts?.softwareVersion?.hasPrefix(expected) == true,
                        "\(directory): \(String(describing: facts))")
                }
            }
            // Comparable, judged, every judged row with its interval, both versions named.
            let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/ab.json"))) as? [String: Any] ?? [:]
            #expect((json["problems"] as? [String])?.isEmpty == true, "\(json["problems"] ?? "")")
            #expect(["no regression", "regressed"].contains(json["outcome"] as? String ?? ""), "\(json["outcome"] ?? "")")
            let rows = json["rows"] as? [[String: Any]] ?? []
            let judged = rows.filter { ["regressed", "improved", "no significant change"].contains($0["verdict"] as? String ?? "") }
            let keys = judged.compactMap { ($0["metric"] as? [String: Any])?["key"] as? String }
            #expect(judged.count >= 10 && keys.contains("login.p50") && keys.contains("login.tls.p50"), "\(keys)")
            for row in judged {
                let low = row["ci_low"] as? Double
                let high = row["ci_high"] as? Double
                let change = row["change"] as? Double
                #expect(low != nil && high != nil && change != nil && low! <= change! && change! <= high!, "\(row)")
            }
            let software = ["baseline", "candidate"].map { ((json[$0] as? [String: Any])?["server_software"] as? [String]) ?? [] }
            #expect(software[0].count == 1 && software[0].first?.hasPrefix("Prosody 0.12.") == true, "\(software)")
            #expect(software[1].count == 1 && software[1].first?.hasPrefix("Prosody 13.") == true, "\(software)")

            // down stops exactly the PIDs up reported.
            let pid = new.values["XMPPLOAD_SERVER_PID"] ?? ""
            #expect(Self.alive(pid))
            let down = try Self.servers(["down", "prosody@13", "--dir", base], timeout: 60)
            #expect(down.status == 0 && down.output.contains(pid), "\(down.output)")
            #expect(!Self.alive(pid))
            #expect(Self.alive(old.values["XMPPLOAD_SERVER_PID"] ?? ""))
        }
    }

    /// Bad input: an unknown build (usage, exit 2), a port in use and `ab` against a build that is not
    /// running (exit 1), each message naming the build and what to do.
    @Test(.timeLimit(.minutes(2)))
    func refusalsNameTheBuildAndWhatToRun() throws {
        try Self.withBuilds { base in
            let unknown = try Self.servers(["up", "prosody@99", "--dir", base])
            #expect(
                unknown.status == 2 && unknown.output.contains("unknown build 'prosody@99'") && unknown.output.contains("prosody@13"),
                "\(unknown.output)")

            let server = try LocalServer.start(accounts: 2)
            defer { server.stop() }
            let busy = try Self.servers(["up", "prosody@0.12", "--dir", base, "--port", String(server.port)])
            #expect(busy.status == 1 && busy.output.contains("prosody@0.12: port \(server.port)") && busy.output.contains("in use"), "\(busy.output)")

            let notRunning = try Self.servers(["ab", "prosody@0.12", "prosody@13", "profiles/login.yaml", "--dir", base, "--rounds", "1"])
            #expect(notRunning.status == 1 && notRunning.output.contains("is not running: scripts/servers up prosody@"), "\(notRunning.output)")
        }
    }
}
