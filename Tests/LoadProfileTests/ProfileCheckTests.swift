import Foundation
import Testing
import XMPPCore

@testable import LoadProfile

/// `check` on a corpus of broken profiles: every problem at once, with exact file:line:column
/// messages (Fixtures/broken/NAME.expected), and every shipped profile loads cleanly.
@Suite struct ProfileCheckTests {
    static let fixtures = Bundle.module.url(forResource: "Fixtures", withExtension: nil)!

    static var brokenNames: [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: fixtures.appendingPathComponent("broken").path))?
            .filter { $0.hasSuffix(".yaml") }.sorted() ?? []
    }

    @Test(arguments: brokenNames)
    func brokenProfileReportsExactlyTheExpectedProblems(name: String) throws {
        let directory = Self.fixtures.appendingPathComponent("broken")
        let yaml = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
        let expected = try String(
            contentsOf: directory.appendingPathComponent(name.replacingOccurrences(of: ".yaml", with: ".expected")), encoding: .utf8)
        do {
            _ = try ProfileLoader.load(yaml: yaml, file: name)
            Issue.record("\(name) loaded without problems")
        } catch {
            #expect(error.description + "\n" == expected)
        }
    }

    @Test func corpusIsNotEmpty() {
        #expect(Self.brokenNames.count >= 5)
    }

    @Test func everyStepKindDecodes() throws {
        let definition = try ProfileLoader.load(path: Self.fixtures.appendingPathComponent("good/full.yaml").path)
        let profile = try #require(definition.profiles.first?.profile)
        #expect(profile.repeatMode == .forever)
        #expect(profile.login == LoginOptions(mechanism: .plain, tls: TLSMode.none, resource: try Template(parsing: "r${index}"), register: true))
        #expect(profile.steps.count == 33)
        #expect(profile.steps.map(\.name).prefix(6) == ["login", "roster.get", "roster.add", "roster.rename", "roster.remove", "presence"])
        let named = try #require(profile.steps.first { $0.name == "final-ping" })
        #expect(named.onError == .continue && named.timeout == .seconds(2))
        #expect(definition.plan?.phases.count == 4)
        #expect(definition.plan?.durationCap == .seconds(600))
        if case .message(let action) = profile.steps[11].action {
            #expect(action.to == .selfJID && action.count == 3 && action.interval == .constant(.seconds(1)))
        } else {
            Issue.record("step 12 is not a message: \(profile.steps[11].action)")
        }
    }

    static let shipped: [String] = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        let directory = url.appendingPathComponent("profiles")
        return ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
            .filter { $0.hasSuffix(".yaml") }.sorted().map { directory.appendingPathComponent($0).path }
    }()

    @Test(arguments: shipped)
    func shippedProfileLoadsWithoutProblems(path: String) throws {
        let definition = try ProfileLoader.load(path: path)
        #expect(!definition.profiles.isEmpty)
        // Each shipped profile starts with a comment block saying what it is for and how to run it.
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.hasPrefix("# "))
        #expect(text.contains("xmppload run profiles/"))
    }

    @Test func shippedProfilesAreAllThere() {
        let names = Set(Self.shipped.map { URL(fileURLWithPath: $0).lastPathComponent })
        #expect(
            names.isSuperset(of: [
                "login.yaml", "idle.yaml", "chat.yaml", "login-storm.yaml", "muc.yaml",
                "idle-soak.yaml", "soak-mixed.yaml", "compare.yaml",
            ]))
    }

    @Test func mixWeightsAndNestedProblemsAreReported() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mix-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try "name: a\nsteps: [login, ping]\n".write(to: directory.appendingPathComponent("a.yaml"), atomically: true, encoding: .utf8)
        try "name: b\nsteps: [ping]\n".write(to: directory.appendingPathComponent("b.yaml"), atomically: true, encoding: .utf8)
        let mix = directory.appendingPathComponent("mix.yaml")
        try "mix:\n  - {profile: a.yaml, weight: 3}\n  - {profile: b.yaml, weight: 1}\n  - {profile: c.yaml, weight: -1}\n".write(
            to: mix, atomically: true, encoding: .utf8)
        #expect(throws: ProfileErrors.self) { try ProfileLoader.load(path: mix.path) }
        do { _ = try ProfileLoader.load(path: mix.path) } catch {
            let messages = error.problems.map(\.message)
            #expect(messages.contains("a ping step before login"))  // from b.yaml
            #expect(messages.contains("weight must be greater than 0, got -1"))
            #expect(messages.contains("cannot read profile 'c.yaml'"))
            #expect(error.problems.contains { $0.location.file.hasSuffix("b.yaml") && $0.location.line == 2 })
        }
        try "mix:\n  - {profile: a.yaml, weight: 3}\n".write(to: mix, atomically: true, encoding: .utf8)
        #expect(try ProfileLoader.load(path: mix.path).profiles.map(\.weight) == [3])
    }
}
