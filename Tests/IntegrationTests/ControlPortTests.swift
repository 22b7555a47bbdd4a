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
    /// Sends one request through the library client; nil while the port is not up yet.
    static func send(_ port: Int, _ method: String, _ path: String, _ json: String? = nil) async -> ControlClient.Answer? {
        try? await ControlClient.send(host: "127.0.0.1", port: port, method: method, path: path, json: json, timeout: .seconds(5))
    }

    static func object(_ answer: ControlClient.Answer?) -> [String: Any] {
        guard let answer else { return [:] }
        return ((try? JSONSerialization.jsonObject(with: Data(answer.body.utf8))) as? [String: Any]) ?? [:]
    }

    /// Waits until the run's elapsed time (from `/status`) reaches `seconds`; returns the status.
    static func waitUntil(_ port: Int, elapsed seconds: Double, limit: Double = 60) async throws -> [String: Any] {
        let since = Date()
        while Date().timeIntervalSince(since) < limit {
            let status = object(await send(port, "GET", "/status"))
            if let elapsed = status["elapsed_s"] as? Double, elapsed >= seconds { return status }
            try await Task.sleep(for: .milliseconds(200))
        }
        throw ChildProcessError(message: "the control port did not reach \(seconds) s within \(limit) s")
    }

    /// `xmppload control 127.0.0.1:PORT …` as a user runs it.
    static func control(_ port: Int, _ words: [String]) throws -> CommandLineTests.Result {
        try CommandLineTests.xmppload(["control", "127.0.0.1:\(port)"] + words, timeout: 30)
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

        let before = try await Self.waitUntil(port, elapsed: 4)
        #expect(before["model"] as? String == "open", "\(before)")
        #expect(before["rate_asked"] as? Double == 10, "\(before)")
        #expect(before["controlled"] as? Bool == false)

        // Refusals: the wrong model (CLI), a negative rate, an unknown field (library client).
        let wrongModel = try Self.control(port, ["sessions", "10"])
        #expect(wrongModel.status == 1 && wrongModel.output.contains("refused (409)"), "\(wrongModel.output)")
        #expect(wrongModel.output.contains("set \"rate\""), "\(wrongModel.output)")
        #expect(await Self.send(port, "POST", "/load", #"{"rate": -5}"#)?.status == 422)
        #expect(await Self.send(port, "POST", "/load", #"{"rate": 5, "speed": 1}"#)?.status == 400)
        #expect(await Self.send(port, "POST", "/resume")?.status == 409)

        // 10/s → 40/s at once.
        let changed = Self.object(await Self.send(port, "POST", "/load", #"{"rate": 40}"#))
        #expect((changed["accepted"] as? String)?.contains("rate 10/s → 40/s") == true, "\(changed)")
        let changedAt = try #require(changed["elapsed_s"] as? Double)
        let after = try await Self.waitUntil(port, elapsed: changedAt + 3)
        #expect(after["rate_asked"] as? Double == 40, "\(after)")
        let achieved = after["rate_achieved"] as? Double ?? 0
        #expect(achieved >= 30, "achieved \(achieved)/s after asking 40/s: \(after)")

        // Pause (the CLI), hold 3 s, resume (the CLI), then stop (the CLI).
        let paused = try Self.control(port, ["pause"])
        #expect(paused.status == 0 && paused.output.contains("accepted: arrivals paused"), "\(paused.output)")
        #expect(paused.output.contains("paused          yes"), "\(paused.output)")
        let pausedStatus = Self.object(await Self.send(port, "GET", "/status"))
        let pausedAt = try #require(pausedStatus["elapsed_s"] as? Double)
        _ = try await Self.waitUntil(port, elapsed: pausedAt + 3.2)
        let resumed = try Self.control(port, ["resume"])
        #expect(resumed.status == 0 && resumed.output.contains("arrivals resumed"), "\(resumed.output)")
        let resumedAt = try #require(Self.object(await Self.send(port, "GET", "/status"))["elapsed_s"] as? Double)
        _ = try await Self.waitUntil(port, elapsed: resumedAt + 3)
        let status = try Self.control(port, ["status"])
        #expect(status.status == 0 && status.output.contains("rate_asked      40"), "\(status.output)")
        let stopped = try Self.control(port, ["stop"])
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

        let start = try await Self.waitUntil(port, elapsed: 3)
        #expect(start["model"] as? String == "closed" && start["target_sessions"] as? Int == 10, "\(start)")
        #expect(await Self.send(port, "POST", "/load", #"{"sessions": 31}"#)?.status == 422)
        let tooMany = try Self.control(port, ["sessions", "31"])
        #expect(tooMany.status == 1 && tooMany.output.contains("only 30 accounts"), "\(tooMany.output)")
        #expect(try Self.control(port, ["rate", "5"]).status == 1)

        func online(reaching target: Int, limit: Double = 15) async throws -> Int {
            let since = Date()
            var last = -1
            while Date().timeIntervalSince(since) < limit {
                last = Self.object(await Self.send(port, "GET", "/status"))["live_sessions"] as? Int ?? -1
                if last == target { return last }
                try await Task.sleep(for: .milliseconds(250))
            }
            return last
        }
        let up = try Self.control(port, ["sessions", "20", "--over", "2s"])
        #expect(up.status == 0 && up.output.contains("sessions 10 → 20 over 2s"), "\(up.output)")
        #expect(try await online(reaching: 20) == 20)
        // Held until an interval has seen them all online.
        let held = Date()
        while Date().timeIntervalSince(held) < 5,
            (Self.object(await Self.send(port, "GET", "/status"))["last_interval"] as? [String: Any])?["online"] as? Int != 20
        {
            try await Task.sleep(for: .milliseconds(250))
        }
        let down = try Self.control(port, ["sessions", "5"])
        #expect(down.status == 0, "\(down.output)")
        #expect(try await online(reaching: 5) == 5, "surplus sessions log out")
        let stopped = try Self.control(port, ["stop"])
        #expect(stopped.status == 0)
        runStatus = run.wait(timeout: 60)
        #expect(runStatus == 130, "\(run.output)")
        let summary = try ResultsDirectory(path: out).readSummary()
        #expect(summary.controlEvents?.map(\.action) == ["load", "load", "stop"])
        #expect(summary.sessions.failed == 0, "sessions asked to leave log out, they do not fail")
        let intervals = try ResultsDirectory(path: out).readIntervals()
        #expect(intervals.contains { $0.gauge(.online) == 20 }, "\(intervals.map { $0.gauge(.online) })")
    }
}
