import Testing
import XMPPCore

@testable import LoadProfile

/// The order rules `check` applies while it walks the steps, and the defaults it fills in.
@Suite struct SessionOrderTests {
    static func load(_ yaml: String) throws -> Profile {
        let definition = try ProfileLoader.load(yaml: yaml, file: "t.yaml")
        return try #require(definition.profiles.first?.profile)
    }

    static func messages(_ yaml: String) -> [String] {
        do {
            _ = try ProfileLoader.load(yaml: yaml, file: "t.yaml")
            return []
        } catch {
            return error.problems.map { "\($0.location.line):\($0.location.column) \($0.message)" }
        }
    }

    struct MergeRow: Sendable, CustomTestStringConvertible {
        let branches: [SessionFlow]
        let start: SessionFlow
        let expected: SessionFlow
        var testDescription: String { "\(branches) from \(start)" }
    }

    @Test(arguments: [
        MergeRow(branches: [.loggedIn, .loggedIn], start: .loggedIn, expected: .loggedIn),
        MergeRow(branches: [.loggedIn, .ended(by: "logout")], start: .loggedIn, expected: .loggedIn),
        MergeRow(branches: [.ended(by: "logout"), .ended(by: "stay_online")], start: .loggedIn, expected: .ended(by: "logout")),
        MergeRow(branches: [.loggedIn, .loggedOut], start: .loggedOut, expected: .loggedOut),
        MergeRow(branches: [.loggedOut, .ended(by: "logout")], start: .loggedOut, expected: .loggedOut),
        MergeRow(branches: [], start: .loggedIn, expected: .loggedIn),
    ])
    func chooseMergesWhereItsBranchesLeaveTheSession(_ row: MergeRow) {
        #expect(SessionFlow.merging(row.branches, from: row.start) == row.expected)
    }

    @Test func aBranchThatLogsOutLetsTheOthersGoOn() {
        let yaml = """
            steps:
              - login
              - choose:
                  - {weight: 1, steps: [logout]}
                  - {weight: 1, steps: [ping]}
              - ping
            """
        #expect(Self.messages(yaml) == [])
    }

    @Test func aLoginInOnlyOneBranchLeavesLaterStanzasBeforeLogin() {
        let yaml = """
            steps:
              - choose:
                  - {weight: 1, steps: [login]}
                  - {weight: 1, steps: [{think: 1s}]}
              - ping
            """
        #expect(Self.messages(yaml) == ["5:5 a ping step before login"])
    }

    @Test func aLogoutAfterStayOnlineIsFineAnythingElseNeverRuns() {
        #expect(Self.messages("steps: [login, stay_online, logout]") == [])
        #expect(
            Self.messages("steps: [login, stay_online, ping, logout]")
                == ["1:29 this step never runs: 'stay_online' lasts until the load stops, then the session logs out"])
    }

    @Test func aRepeatOfOnePassMayEndTheSession() {
        #expect(Self.messages("steps: [login, {repeat: {count: 1, steps: [ping, logout]}}]") == [])
        #expect(
            Self.messages("steps: [login, {repeat: {count: 2, steps: [ping, logout]}}]")
                == ["1:16 the repeated steps end the session ('logout'), so they never run a second time"])
    }

    @Test func theImplicitLogoutClosesEveryProfileThatStaysLoggedIn() throws {
        let ends = { (yaml: String) throws -> String? in try Self.load(yaml).steps.last.map { $0.name } }
        #expect(try ends("steps: [login, ping]") == "logout")
        #expect(try ends("steps: [login, stay_online]") == "logout")
        #expect(try ends("steps: [login, {repeat: {forever: true, steps: [{think: 1s}, ping]}}]") == "logout")
        #expect(try Self.load("steps: [login, ping, logout]").steps.count == 3)
    }

    @Test func aWaitWithoutTimeoutWaitsAsLongAsItsStep() throws {
        let profile = try Self.load(
            """
            step_timeout: 7s
            steps:
              - login
              - wait: {for: message}
              - wait: {for: message, timeout: 2s}
              - {wait: {for: iq}, timeout: 3s}
              - wait
            """)
        let timeouts = profile.steps.compactMap { step -> Duration? in
            if case .wait(let condition) = step.action { return condition.timeout }
            return nil
        }
        #expect(timeouts == [.seconds(7), .seconds(2), .seconds(3), .seconds(7)])
    }

    @Test func loginOptionsOfAStepMergeOverTheProfilesDefaults() throws {
        let profile = try Self.load(
            """
            login: {sasl: scram-sha-256, tls: direct, resource: "r${index}"}
            steps:
              - login: {sasl: PLAIN}
            """)
        guard case .login(let options) = profile.steps[0].action else {
            Issue.record("first step is not a login")
            return
        }
        #expect(options.mechanism == .plain)
        #expect(options.tls == .direct)
        #expect(options.resource.render { $0 == "index" ? "7" : nil } == "r7")
        #expect(profile.login.mechanism == .scramSHA256)
    }
}
