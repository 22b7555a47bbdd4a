import Foundation
import LoadEngine
import LoadResults
import RunControl
import Testing

/// `--control-port` against a real Prosody: a run started at 10 logins/s is set to 40/s through
/// `POST /load` and follows within one interval; `pause` stops arrivals and `resume` restarts them;
/// `stop` ends the run with its results written; every change is in intervals.jsonl, summary.json
/// and report.html; refusals are clear. The `xmppload control` client is driven end to end.
@Suite(.serialized) struct ControlPortTests {
    /// Sends one request through the library client with the run's token (read from `out`'s
    /// control-token, or `token`); nil while the port is not up yet.
    static func send(
        _ port: Int, _ method: String, _ path: String, _ json: String? = nil, out: String, token: ControlToken? = nil
    ) async -> ControlClient.Answer? {
        let token = token ?? (try? ControlToken.read(from: out + "/" + ControlToken.fileName))
        return try? await ControlClient.send(
            host: "127.0.0.1", port: port, method: method, path: path, json: json, token: token, timeout: .seconds(5))
    }

    static func object(_ answer: ControlClient.Answer?) -> [String: Any] {
        guard let answer else { return [:] }
        return ((try? JSONSerialization.jsonObject(with: Data(answer.body.utf8))) as? [String: Any]) ?? [:]
    }

    /// Waits until the run's elapsed time (from `/status`) reaches `seconds`; returns the status.
    static func waitUntil(
        _ port: Int, out: String, token: ControlToken? = nil, elapsed seconds: Double, limit: Double = 60
    ) async throws -> [String: Any] {
        let since = Date()
        while Date().timeIntervalSince(since) < limit {
            let status = object(await send(port, "GET", "/status", out: out, token: token))
            if let elapsed = status["elapsed_s"] as? Double, elapsed >= seconds { return status }
            try await Task.sleep(for: .milliseconds(200))
        }
        throw ChildProcessError(message: "the control port did not reach \(seconds) s within \(limit) s")
    }

    /// `xmppload control 127.0.0.1:PORT … --results OUT` as a user runs it.
    static func control(_ port: Int, _ words: [String], out: String) throws -> CommandLineTests.Result {
        try CommandLineTests.xmppload(["control", "127.0.0.1:\(port)"] + words + ["--results", out], timeout: 30)
    }

    /// The `{"event":"control"}` lines of intervals.jsonl.
    static func eventLines(_ directory: String) throws -> [[String: Any]] {
        let text = try String(contentsOfFile: directory + "/intervals.jsonl", encoding: .utf8)
        return text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                object["event"] as? String == "control"
            else { return nil }
            return object
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func anOpenRunIsSteeredPausedResumedAndStopped() async throws {
        let server = try LocalServer.start(accounts: 300)
        defer { server.stop() }
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-control-\(UUID().uuidString.prefix(6))").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let port = try VerdictCommandTests.unusedPort()
        // Open model, 10 logins/s, sessions log in and out (login.yaml); at most 45 s of load.
        let run = try ChildProcess.spawn(
            CommandLineTests.binary,
            [
                "run", LocalServer.repositoryRoot.path + "/profiles/login.yaml", "--server", "127.0.0.1:\(server.port)",
                "--domain", server.domain, "--accounts", "1-300", "--password", server.password, "--rate", "10",
                "--duration", "45s", "--insecure", "--interval", "1s", "--control-port", "\(port)", "--out", out,
            ])
        defer { run.removeLog() }
        var runStatus: Int32?
        defer { if runStatus == nil { _ = run.wait(timeout: 1, signalAfter: 0) } }

        let before = try await Self.waitUntil(port, out: out, elapsed: 4)
        #expect(before["model"] as? String == "open", "\(before)")
        #expect(before["rate_asked"] as? Double == 10, "\(before)")
        #expect(before["controlled"] as? Bool == false)

        // Refusals: the wrong model (CLI), a negative rate, an unknown field (library client).
        let wrongModel = try Self.control(port, ["sessions", "10"], out: out)
        #expect(wrongModel.status == 1 && wrongModel.output.contains("refused (409)"), "\(wrongModel.output)")
        #expect(wrongModel.output.contains("set \"rate\""), "\(wrongModel.output)")
        #expect(await Self.send(port, "POST", "/load", #"{"rate": -5}"#, out: out)?.status == 422)
        #expect(await Self.send(port, "POST", "/load", #"{"rate": 5, "speed": 1}"#, out: out)?.status == 400)
        #expect(await Self.send(port, "POST", "/resume", out: out)?.status == 409)

        // 10/s → 40/s at once.
        let changed = Self.object(await Self.send(port, "POST", "/load", #"{"rate": 40}"#, out: out))
        #expect((changed["accepted"] as? String)?.contains("rate 10/s → 40/s") == true, "\(changed)")
        let changedAt = try #require(changed["elapsed_s"] as? Double)
        let after = try await Self.waitUntil(port, out: out, elapsed: changedAt + 3)
        #expect(after["rate_asked"] as? Double == 40, "\(after)")
        let achieved = after["rate_achieved"] as? Double ?? 0
        #expect(achieved >= 30, "achieved \(achieved)/s after asking 40/s: \(after)")

        // Pause (the CLI), hold 3 s, resume (the CLI), then stop (the CLI).
        let paused = try Self.control(port, ["pause"], out: out)
        #expect(paused.status == 0 && paused.output.contains("accepted: arrivals paused"), "\(paused.output)")
        #expect(paused.output.contains("paused          yes"), "\(paused.output)")
        let pausedStatus = Self.object(await Self.send(port, "GET", "/status", out: out))
        let pausedAt = try #require(pausedStatus["elapsed_s"] as? Double)
        _ = try await Self.waitUntil(port, out: out, elapsed: pausedAt + 3.2)
        let resumed = try Self.control(port, ["resume"], out: out)
        #expect(resumed.status == 0 && resumed.output.contains("arrivals resumed"), "\(resumed.output)")
        let resumedAt = try #require(Self.object(await Self.send(port, "GET", "/status", out: out))["elapsed_s"] as? Double)
        _ = try await Self.waitUntil(port, out: out, elapsed: resumedAt + 3)
        let status = try Self.control(port, ["status"], out: out)
        #expect(status.status == 0 && status.output.contains("rate_asked      40"), "\(status.output)")
        let stopped = try Self.control(port, ["stop"], out: out)
        #expect(stopped.status == 0 && stopped.output.contains("stop asked"), "\(stopped.output)")
        runStatus = run.wait(timeout: 60)
        #expect(runStatus == 130, "a stop is a SIGINT: \(run.output)")
        #expect(run.output.contains("control: http://127.0.0.1:\(port)"), "\(run.output)")
        #expect(run.output.contains("control (changes made through --control-port)"), "\(run.output)")

        // intervals.jsonl: the events in order, and intervals that follow them.
        let directory = ResultsDirectory(path: out)
        let events = try Self.eventLines(out)
        #expect(events.map { $0["action"] as? String ?? "" } == ["load", "pause", "resume", "stop"], "\(events)")
        let intervals = try directory.readIntervals()
        let loadAt = try #require(events.first?["at"] as? Double)
        let pauseAt = try #require(events.dropFirst().first?["at"] as? Double)
        let resumeAt = try #require(events.dropFirst(2).first?["at"] as? Double)
        // Within one interval of the change, a whole interval runs at 40/s (±25 %).
        let firstWhole = try #require(intervals.first { $0.start >= loadAt + 1 && $0.end <= pauseAt })
        let rate = Double(firstWhole.counter(.sessionsStarted)) / (firstWhole.end - firstWhole.start)
        #expect(rate >= 30 && rate <= 50, "interval \(firstWhole.start)-\(firstWhole.end): \(rate)/s")
        let beforeChange = intervals.filter { $0.end <= loadAt && $0.start >= 1 }
        #expect(
            !beforeChange.isEmpty && beforeChange.allSatisfy { $0.counter(.sessionsStarted) <= 14 },
            "before: \(beforeChange.map { $0.counter(.sessionsStarted) })")
        // An interval wholly inside the pause starts nobody; one after the resume starts sessions again.
        let inPause = intervals.filter { $0.start >= pauseAt && $0.end <= resumeAt }
        #expect(
            !inPause.isEmpty && inPause.allSatisfy { $0.counter(.sessionsStarted) == 0 }, "in pause: \(inPause.map { $0.counter(.sessionsStarted) })")
        let afterResume = intervals.filter { $0.start >= resumeAt + 0.5 }.prefix(2)
        #expect(afterResume.contains { $0.counter(.sessionsStarted) >= 25 }, "after resume: \(afterResume.map { $0.counter(.sessionsStarted) })")

        // summary.json and report.html.
        let summary = try directory.readSummary()
        #expect(summary.controlEvents?.map(\.action) == ["load", "pause", "resume", "stop"])
        #expect(summary.controlEvents?.first?.rate == 40 && summary.controlEvents?.first?.from == 10)
        #expect(summary.stopReason == "interrupted")
        #expect(summary.verdict?.work?.sessionsPlanned == nil, "a steered run has no planned figures")
        #expect(summary.sessions.failed == 0)
        let html = try String(contentsOfFile: out + "/report.html", encoding: .utf8)
        #expect(html.contains("<h2>Control</h2>") && html.contains("rate 10/s → 40/s"))
        #expect(html.components(separatedBy: "class=\"marker\"").count - 1 >= 8, "markers on the sessions and throughput charts")
    }

    @Test(.timeLimit(.minutes(3)))
    func aClosedRunFollowsItsTargetUpAndDown() async throws {
        let server = try LocalServer.start(accounts: 30)
        defer { server.stop() }
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-control-\(UUID().uuidString.prefix(6))").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let port = try VerdictCommandTests.unusedPort()
        // Closed model: 10 idle sessions, at most 40 s of load.
        let run = try ChildProcess.spawn(
            CommandLineTests.binary,
            [
                "run", LocalServer.repositoryRoot.path + "/profiles/idle.yaml", "--server", "127.0.0.1:\(server.port)",
                "--domain", server.domain, "--accounts", "1-30", "--password", server.password, "--sessions", "10",
                "--ramp", "1s", "--duration", "40s", "--insecure", "--interval", "1s", "--control-port", "\(port)", "--out", out,
            ])
        defer { run.removeLog() }
        var runStatus: Int32?
        defer { if runStatus == nil { _ = run.wait(timeout: 1, signalAfter: 0) } }

        let start = try await Self.waitUntil(port, out: out, elapsed: 3)
        #expect(start["model"] as? String == "closed" && start["target_sessions"] as? Int == 10, "\(start)")
        #expect(await Self.send(port, "POST", "/load", #"{"sessions": 31}"#, out: out)?.status == 422)
        let tooMany = try Self.control(port, ["sessions", "31"], out: out)
        #expect(tooMany.status == 1 && tooMany.output.contains("only 30 accounts"), "\(tooMany.output)")
        #expect(try Self.control(port, ["rate", "5"], out: out).status == 1)

        func online(reaching target: Int, limit: Double = 15) async throws -> Int {
            let since = Date()
            var last = -1
            while Date().timeIntervalSince(since) < limit {
                last = Self.object(await Self.send(port, "GET", "/status", out: out))["live_sessions"] as? Int ?? -1
                if last == target { return last }
                try await Task.sleep(for: .milliseconds(250))
            }
            return last
        }
        let up = try Self.control(port, ["sessions", "20", "--over", "2s"], out: out)
        #expect(up.status == 0 && up.output.contains("sessions 10 → 20 over 2s"), "\(up.output)")
        #expect(try await online(reaching: 20) == 20)
        // Held until an interval has seen them all online.
        let held = Date()
        while Date().timeIntervalSince(held) < 5,
            (Self.object(await Self.send(port, "GET", "/status", out: out))["last_interval"] as? [String: Any])?["online"] as? Int != 20
        {
            try await Task.sleep(for: .milliseconds(250))
        }
        let down = try Self.control(port, ["sessions", "5"], out: out)
        #expect(down.status == 0, "\(down.output)")
        #expect(try await online(reaching: 5) == 5, "surplus sessions log out")
        let stopped = try Self.control(port, ["stop"], out: out)
        #expect(stopped.status == 0)
        runStatus = run.wait(timeout: 60)
        #expect(runStatus == 130, "\(run.output)")
        let summary = try ResultsDirectory(path: out).readSummary()
        #expect(summary.controlEvents?.map(\.action) == ["load", "load", "stop"])
        #expect(summary.sessions.failed == 0, "sessions asked to leave log out, they do not fail")
        let intervals = try ResultsDirectory(path: out).readIntervals()
        #expect(intervals.contains { $0.gauge(.online) == 20 }, "\(intervals.map { $0.gauge(.online) })")
    }

    /// A run's control port lets no one in without its token: `stop` without it (the library
    /// client, the CLI with another token, curl-like requests) is refused 401 and logged without the
    /// token, and the run goes on; with it, the run stops. The generated token file is 0600 and is
    /// removed at the run's end.
    @Test(.timeLimit(.minutes(3)))
    func aStopWithoutTheTokenIsRefusedAndTheRunGoesOn() async throws {
        let server = try LocalServer.start(accounts: 10)
        defer { server.stop() }
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-control-\(UUID().uuidString.prefix(6))").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let port = try VerdictCommandTests.unusedPort()
        let run = try ChildProcess.spawn(
            CommandLineTests.binary,
            [
                "run", LocalServer.repositoryRoot.path + "/profiles/idle.yaml", "--server", "127.0.0.1:\(server.port)",
                "--domain", server.domain, "--accounts", "1-10", "--password", server.password, "--sessions", "5",
                "--ramp", "1s", "--duration", "40s", "--insecure", "--interval", "1s", "--control-port", "\(port)", "--out", out,
            ])
        defer { run.removeLog() }
        var runStatus: Int32?
        defer { if runStatus == nil { _ = run.wait(timeout: 1, signalAfter: 0) } }

        _ = try await Self.waitUntil(port, out: out, elapsed: 2)
        let tokenFile = out + "/" + ControlToken.fileName
        var info = stat()
        #expect(stat(tokenFile, &info) == 0 && info.st_mode & 0o777 == 0o600, "the token file is the user's alone")
        let token = try ControlToken.read(from: tokenFile)
        #expect(run.output.contains("control token: \(tokenFile)"), "\(run.output)")
        #expect(!run.output.contains(token.text), "the token is never printed")

        // No token, a wrong one (library client); a wrong token file (CLI): 401, nothing changes.
        let noToken = try await ControlClient.send(host: "127.0.0.1", port: port, method: "POST", path: "/stop", token: nil)
        #expect(noToken.status == 401 && noToken.body.contains("no Authorization header"), "\(noToken)")
        let guess = ControlToken.generate()
        #expect(await Self.send(port, "POST", "/stop", out: out, token: guess)?.status == 401)
        #expect(await Self.send(port, "GET", "/status", out: out, token: guess)?.status == 401)
        let wrongFile = out + "/wrong-token"
        try guess.write(to: wrongFile)
        let refused = try CommandLineTests.xmppload(["control", "127.0.0.1:\(port)", "stop", "--token-file", wrongFile], timeout: 30)
        #expect(refused.status == 1 && refused.output.contains("refused (401): wrong token"), "\(refused.output)")
        #expect(refused.output.contains("the token sent came from \(wrongFile)"), "\(refused.output)")
        // The run goes on: still steady, its clock running, no stop asked.
        let going = try await Self.waitUntil(port, out: out, elapsed: 5)
        #expect(going["phase"] as? String == "steady" && going["control_events"] as? Int == 0, "\(going)")
        #expect(run.output.contains("xmppload: control port: refused POST /stop from 127.0.0.1:"), "\(run.output)")
        #expect(run.output.contains("(401: no Authorization header)") && run.output.contains("(401: wrong token)"), "\(run.output)")
        #expect(!run.output.contains(guess.text) && !run.output.contains(token.text), "refusals are logged without tokens")

        // With the token (the CLI finds it through --results), the run stops.
        let stopped = try Self.control(port, ["stop"], out: out)
        #expect(stopped.status == 0 && stopped.output.contains("stop asked"), "\(stopped.output)")
        runStatus = run.wait(timeout: 60)
        #expect(runStatus == 130, "\(run.output)")
        #expect(!FileManager.default.fileExists(atPath: tokenFile), "the generated token is removed at the run's end")
        let summary = try ResultsDirectory(path: out).readSummary()
        #expect(summary.controlEvents?.map(\.action) == ["stop"])
    }

    /// A token file the user gives: the run uses it (and says so), `control --token-file` with it
    /// works; a control port beyond loopback without one is a usage error before anything starts.
    @Test(.timeLimit(.minutes(3)))
    func aGivenTokenFileIsUsedAndBeyondLoopbackNeedsOne() async throws {
        let beyond = try CommandLineTests.xmppload(
            [
                "run", "profiles/idle.yaml", "--server", "127.0.0.1:1", "--domain", "load.test", "--accounts", "1-2",
                "--password", "x", "--sessions", "1", "--duration", "5s", "--control-port", "9300", "--control-host", "0.0.0.0",
                "--out", FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-never").path,
            ], timeout: 30)
        #expect(beyond.status == 2, "\(beyond.output)")
        #expect(beyond.output.contains("--control-host 0.0.0.0 can be reached from other hosts: give --control-token-file FILE"), "\(beyond.output)")

        let server = try LocalServer.start(accounts: 4)
        defer { server.stop() }
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("xmppload-control-\(UUID().uuidString.prefix(6))").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let tokenFile = FileManager.default.temporaryDirectory.appendingPathComponent("team-token-\(UUID().uuidString.prefix(6))").path
        defer { unlink(tokenFile) }
        let token = ControlToken.generate()
        try token.write(to: tokenFile)
        let port = try VerdictCommandTests.unusedPort()
        let run = try ChildProcess.spawn(
            CommandLineTests.binary,
            [
                "run", LocalServer.repositoryRoot.path + "/profiles/idle.yaml", "--server", "127.0.0.1:\(server.port)",
                "--domain", server.domain, "--accounts", "1-4", "--password", server.password, "--sessions", "2",
                "--ramp", "1s", "--duration", "40s", "--insecure", "--interval", "1s", "--control-port", "\(port)",
                "--control-token-file", tokenFile, "--out", out,
            ])
        defer { run.removeLog() }
        var runStatus: Int32?
        defer { if runStatus == nil { _ = run.wait(timeout: 1, signalAfter: 0) } }
        _ = try await Self.waitUntil(port, out: out, token: token, elapsed: 2)
        #expect(!FileManager.default.fileExists(atPath: out + "/" + ControlToken.fileName), "no token of its own")
        #expect(run.output.contains("control token: \(tokenFile) (--control-token-file)"), "\(run.output)")
        let status = try CommandLineTests.xmppload(["control", "127.0.0.1:\(port)", "status", "--token-file", tokenFile], timeout: 30)
        #expect(status.status == 0 && status.output.contains("phase"), "\(status.output)")
        let stopped = try CommandLineTests.xmppload(["control", "127.0.0.1:\(port)", "stop", "--token-file", tokenFile], timeout: 30)
        #expect(stopped.status == 0, "\(stopped.output)")
        runStatus = run.wait(timeout: 60)
        #expect(runStatus == 130, "\(run.output)")
        #expect(FileManager.default.fileExists(atPath: tokenFile), "the user's token file is left alone")
    }
}
