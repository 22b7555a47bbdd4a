import Foundation
import LoadResults
import Testing

@testable import RunControl

/// Tokens: fresh ones, the constant-time comparison, the 0600 file, reading a given file, which
/// hosts are loopback, and where `xmppload control` finds a run's token.
@Suite struct ControlTokenTests {
    @Test func aFreshTokenIs256RandomBitsInHex() {
        let tokens = (0..<200).map { _ in ControlToken.generate().text }
        #expect(Set(tokens).count == tokens.count)
        #expect(tokens.allSatisfy { $0.count == 64 && $0.allSatisfy { "0123456789abcdef".contains($0) } })
        // Every hex digit shows up in every position over 200 tokens with overwhelming probability
        // (a stuck digit, e.g. lost leading zeros, would show here).
        for position in [0, 15, 16, 63] {
            let digits = Set(tokens.map { Array($0)[position] })
            #expect(digits.count >= 12, "position \(position): \(digits.sorted())")
        }
    }

    struct Match: Sendable, CustomTestStringConvertible {
        var presented: String
        var matches: Bool
        var testDescription: String { "'\(presented)'" }
    }

    @Test(arguments: [
        Match(presented: "abcdefghijklmnop", matches: true),
        Match(presented: "abcdefghijklmnoq", matches: false),
        Match(presented: "bbcdefghijklmnop", matches: false),
        Match(presented: "abcdefghijklmno", matches: false),
        Match(presented: "abcdefghijklmnopq", matches: false),
        Match(presented: "abcdefghijklmnopabcdefghijklmnop", matches: false),
        Match(presented: "", matches: false),
    ])
    func matches(_ row: Match) {
        #expect(ControlToken("abcdefghijklmnop")!.matches(row.presented) == row.matches)
    }

    @Test func tokensTooShortOrWithSpacesAreRefused() {
        #expect(ControlToken("short") == nil)
        #expect(ControlToken("abcdefgh ijklmnop") == nil)
        #expect(ControlToken("abcdefghijklmnop\u{7}") == nil)
        #expect(ControlToken(String(repeating: "a", count: 1025)) == nil)
        #expect(ControlToken(String(repeating: "a", count: 16)) != nil)
    }

    @Test(arguments: [
        ("127.0.0.1", true), ("127.1.2.3", true), ("::1", true), ("[::1]", true), ("localhost", true), ("::ffff:127.0.0.1", true),
        ("0.0.0.0", false), ("::", false), ("10.0.0.5", false), ("128.0.0.1", false), ("192.168.1.10", false),
        ("example.com", false), ("fe80::1", false), ("", false),
    ])
    func loopback(_ host: String, _ expected: Bool) {
        #expect(ControlToken.isLoopback(host: host) == expected)
    }

    static func temporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("control-token-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func theTokenFileIsTheUsersAloneAndReadsBack() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/" + ControlToken.fileName
        let old = umask(0)
        defer { umask(old) }
        let token = ControlToken.generate()
        try token.write(to: path)
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(!ControlToken.isReadableByOthers(path))
        #expect(try ControlToken.read(from: path) == token)
        // Written again (a run with --overwrite): replaced, still 0600.
        chmod(path, 0o644)
        let next = ControlToken.generate()
        try next.write(to: path)
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(try ControlToken.read(from: path) == next)
        // A symbolic link planted there is replaced, not followed.
        let elsewhere = directory + "/elsewhere"
        try "keep\n".write(toFile: elsewhere, atomically: false, encoding: .utf8)
        unlink(path)
        symlink(elsewhere, path)
        try token.write(to: path)
        #expect(try String(contentsOfFile: elsewhere, encoding: .utf8) == "keep\n")
        #expect(try ControlToken.read(from: path) == token)
    }

    @Test func aGivenFileIsReadFromItsFirstLine() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/mine"
        try "  s3cret-token-of-the-team  \nsecond line\n".write(toFile: path, atomically: false, encoding: .utf8)
        #expect(try ControlToken.read(from: path).text == "s3cret-token-of-the-team")
        try "\n".write(toFile: path, atomically: false, encoding: .utf8)
        #expect(throws: ControlToken.FileProblem.self) { try ControlToken.read(from: path) }
        #expect(throws: ControlToken.FileProblem.self) { try ControlToken.read(from: directory + "/missing") }
    }

    /// `xmppload control` without --token-file: --results DIR, else the newest run under ./results
    /// whose manifest names the port.
    @Test func theClientFindsTheRunsTokenByItsPort() throws {
        let root = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        func run(_ name: String, port: Int?, token: ControlToken?) throws -> String {
            let directory = ResultsDirectory(path: root + "/" + name)
            try directory.create()
            var manifest = RunManifest(
                runID: name, profiles: [], server: "127.0.0.1:5222", domain: "load.test", accounts: "1-2", tls: "none",
                loadModel: "closed", seed: 1, segment: "0/1", commandLine: [], startedAt: Date(), intervalSeconds: 1)
            var settings = RunSettings(
                host: "127.0.0.1", port: 5222, domain: "load.test", accounts: "1-2", accountPrefix: "user", tls: "none", insecure: false,
                sasl: nil, outputDirectory: directory.path, intervalSeconds: 1, maxLatenessSeconds: 1, connectTimeoutSeconds: 10,
                messageGraceSeconds: 5, metricsPort: nil, eventLoops: 1, segment: "0/1")
            settings.controlPort = port
            manifest.settings = settings
            try directory.writeManifest(manifest)
            try token?.write(to: directory.file(ControlToken.fileName))
            return directory.file(ControlToken.fileName)
        }
        let first = ControlToken.generate()
        let second = ControlToken.generate()
        let other = ControlToken.generate()
        let firstPath = try run("a", port: 9300, token: first)
        _ = try run("b", port: 9301, token: other)
        _ = try run("c", port: nil, token: nil)
        #expect(try ControlTokenLocator.locate(port: 9300, tokenFile: nil, resultsDirectory: nil, searchRoot: root).token == first)
        #expect(try ControlTokenLocator.locate(port: 9301, tokenFile: nil, resultsDirectory: nil, searchRoot: root).token == other)
        // A newer run on the same port wins (an older one that crashed left its file).
        usleep(20_000)
        let secondPath = try run("d", port: 9300, token: second)
        #expect(try ControlTokenLocator.locate(port: 9300, tokenFile: nil, resultsDirectory: nil, searchRoot: root).path == secondPath)
        #expect(try ControlTokenLocator.locate(port: 9300, tokenFile: nil, resultsDirectory: root + "/a", searchRoot: root).token == first)
        #expect(try ControlTokenLocator.locate(port: 1, tokenFile: firstPath, resultsDirectory: root + "/b", searchRoot: root).token == first)
        #expect(throws: ControlToken.FileProblem.self) {
            try ControlTokenLocator.locate(port: 9302, tokenFile: nil, resultsDirectory: nil, searchRoot: root)
        }
        #expect(throws: ControlToken.FileProblem.self) {
            try ControlTokenLocator.locate(port: 9300, tokenFile: nil, resultsDirectory: root + "/c", searchRoot: root)
        }
    }
}
