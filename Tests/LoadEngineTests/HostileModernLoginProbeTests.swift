import Foundation
import Testing
import XMPPCore

@testable import LoadEngine
@testable import ServerProbe

#if canImport(Glibc)
import Glibc
#endif

/// `xmppload probe`'s login (the run's `LoginMachine`) against `scripts/hostile-server.py`'s modern
/// login cases on loopback: each ends with its typed error within its bounds, and no token reaches
/// the report. (The load run's assertions come with the session's wiring of the modern login.)
@Suite(.serialized) struct HostileModernLoginProbeTests {
    static let script: String = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" && !FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
            url.deleteLastPathComponent()
        }
        return url.appendingPathComponent("scripts/hostile-server.py").path
    }()

    /// Runs the hostile case and the probe against it; the server is stopped by PID (SIGKILL: a child
    /// of the test process inherits its blocked SIGTERM).
    static func probe(_ name: String, tls: TLSMode, login: LoginMode) async throws -> ProbeReport {
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        server.arguments = [script, name, "--port", "0"]
        let output = Pipe()
        server.standardOutput = output
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer {
            kill(server.processIdentifier, SIGKILL)
            server.waitUntilExit()
        }
        // The first line is `port N`.
        var text = ""
        while !text.contains("\n") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        let port = try #require(text.split(separator: "\n").first.flatMap { $0.hasPrefix("port ") ? Int($0.dropFirst(5)) : nil })
        var options = ServerProbe.Options(
            host: "127.0.0.1", port: port, domain: "load.test", username: "user", password: "secret", tls: tls, insecure: true)
        options.login = login
        return await ServerProbe.run(options)
    }

    @Test(
        .timeLimit(.minutes(1)),
        arguments: [
            ("sasl2-continue", TLSMode.none, LoginMode.sasl2, "sasl2-continue", "bind"),
            ("tls-cb-mismatch", .direct, .auto, "sasl-server-signature", "sasl"),
            ("tls-downgrade", .direct, .auto, "sasl-downgrade", "features"),
            ("tls-downgrade-hash", .direct, .auto, "sasl-downgrade", "sasl"),
        ])
    func endsWithItsTypedError(name: String, tls: TLSMode, login: LoginMode, kind: String, phase: String) async throws {
        let report = try await Self.probe(name, tls: tls, login: login)
        #expect(report.failure?.kind == kind, "\(report.failure.map { "\($0.kind): \($0.detail)" } ?? "no failure")")
        #expect(report.failure?.phase == phase)
    }

    /// The Bind2 answer never comes: the probe's phase wait (10 s) ends it in `bind`.
    @Test(.timeLimit(.minutes(1)))
    func bind2AnswerThatNeverComesTimesOutInBind() async throws {
        let started = ContinuousClock.now
        let report = try await Self.probe("bind2-silence", tls: .none, login: .sasl2)
        #expect(report.failure?.kind == "timeout-login")
        #expect(report.failure?.phase == "bind")
        #expect(ContinuousClock.now - started < .seconds(20))
    }

    /// Bogus tokens and 100 oversized ones per login: the first is kept, refused at the next login,
    /// which falls back to the password on the same stream; no token text in the report.
    @Test(.timeLimit(.minutes(1)))
    func bogusTokenFloodFallsBackAndLeaksNothing() async throws {
        let report = try await Self.probe("fast-flood", tls: .none, login: .sasl2)
        #expect(report.failure == nil)
        #expect(report.modernLogin?.login?.fastTokenExpiry == "2030-01-01T00:00:00Z")
        let relogin = try #require(report.modernLogin?.fastLogin?.login)
        #expect(relogin.fastTokenRejected == "not-authorized")
        #expect(relogin.path == "sasl2-bind2")
        #expect(relogin.roundTrips == 3)
        let json = String(decoding: try JSONEncoder().encode(report), as: UTF8.self)
        #expect(!json.contains("bogus-") && !json.contains("xxxxxxxxxx"))
        #expect(!report.text().contains("bogus-"))
    }
}
