import LoadProfile
import LoadResults
import SessionCore
import Testing
import XMPPCore

/// Reconnecting after a drop: back-off with full jitter, a timed re-login, the program again from the
/// top, bounded attempts, and what is not a drop.
@Suite struct ReconnectTests {
    static let profile = """
        name: soak
        login: {sasl: PLAIN, tls: none, resource: r1}
        reconnect: {attempts: 3, initial: 1s, max: 4s}
        steps:
          - login
          - presence: available
          - stay_online
        """

    /// Logs in and completes the initial presence.
    static func online() throws -> MachineDriver {
        var driver = try MachineDriver(profile: profile)
        try driver.logIn()
        try driver.receive("<presence from='user1@load.test/r1'/>")
        _ = driver.sent()
        return driver
    }

    @Test(arguments: [(1, 1), (2, 2), (3, 4), (4, 4), (10, 4)])
    func theBackOffCeilingDoublesUpToTheMaximum(attempt: Int, seconds: Int64) {
        let policy = ReconnectPolicy(attempts: 10, initialDelay: .seconds(1), maxDelay: .seconds(4))
        #expect(policy.ceiling(attempt: attempt) == .seconds(seconds))
        var generator = SeededGenerator(seed: 9, stream: 0)
        for _ in 0..<50 {
            let delay = policy.delay(attempt: attempt, using: &generator)
            #expect(delay >= .zero && delay <= .seconds(seconds))
        }
    }

    @Test func aDropClosesWaitsAndLogsInAgainThenRunsTheProgramFromTheTop() throws {
        var driver = try Self.online()
        #expect(driver.host.online == [0])
        driver.send(.connectionLost(.reset))
        #expect(driver.actions.last == .close)
        #expect(driver.host.online.isEmpty, "not a message target while away")
        let wake = try #require(driver.wakeAt)
        #expect(wake >= driver.now && wake <= driver.now + .seconds(1), "first back-off within 0…1 s")
        driver.actions.removeAll()
        driver.advance(to: wake)
        #expect(driver.actions == [.connectFirst])
        driver.advance(by: .milliseconds(5))
        try driver.logIn(startedAlready: true)
        #expect(driver.sent().map(\.name) == ["auth", "iq", "presence"], "a new login, then the program again from the step after login")
        try driver.receive("<presence from='user1@load.test/r1'/>")
        #expect(driver.host.online == [0])
        let snapshot = driver.host.recorder.takeSnapshot(start: 0, end: 1)
        #expect(snapshot.errors == ["connection-reset": 1])
        #expect(snapshot.counter(.sessionsReconnects) == 1 && snapshot.counter(.sessionsReconnected) == 1)
        #expect(snapshot.counter(.sessionsLoggedIn) == 1, "a session logs in once; re-logins are counted apart")
        #expect(snapshot.latency["reconnect.login"]?.count == 1)
        #expect(snapshot.latency["login"]?.count == 2, "a reconnect's login is timed like any other")
        #expect(snapshot.counter(.sessionsFailed) == 0)
    }

    @Test func attemptsAreBoundedAndTheLastFailureEndsTheSession() throws {
        var driver = try Self.online()
        driver.send(.streamClosed)
        for attempt in 1...3 {
            driver.advance(by: .seconds(5))
            #expect(driver.actions.last == .connectFirst, "attempt \(attempt)")
            driver.send(.connectFailed(.refused))
        }
        #expect(driver.ended)
        let snapshot = driver.host.recorder.takeSnapshot(start: 0, end: 1)
        #expect(snapshot.errors == ["stream-closed": 1, "connect-refused": 3])
        #expect(snapshot.counter(.sessionsReconnects) == 3 && snapshot.counter(.sessionsFailed) == 1)
        #expect(driver.host.released == [0])
    }

    @Test func aStopWhileWaitingToReconnectEndsTheSession() throws {
        var driver = try Self.online()
        driver.send(.connectionLost(nil))
        driver.send(.stop)
        #expect(driver.ended && driver.wakeAt == nil)
        let snapshot = driver.host.recorder.takeSnapshot(start: 0, end: 1)
        #expect(snapshot.errors == ["connection-closed": 1, "reconnect-abandoned": 1])
    }

    @Test(arguments: [
        SessionError.login(.saslFailure(condition: "not-authorized")),
        .noStreamHeader,
        .stepTimeout(step: "roster.get"),
    ])
    func whatIsNotADropEndsTheSession(error: SessionError) throws {
        var driver = try Self.online()
        driver.send(.abort(error))
        #expect(driver.ended)
    }

    @Test func churnDropsARunningSessionWithoutAnErrorAndItComesBack() throws {
        var driver = try Self.online()
        driver.send(.churn)
        #expect(driver.actions.last == .close)
        driver.advance(by: .seconds(1))
        #expect(driver.actions.last == .connectFirst)
        try driver.logIn(startedAlready: true)
        let snapshot = driver.host.recorder.takeSnapshot(start: 0, end: 1)
        #expect(snapshot.errors.isEmpty)
        #expect(snapshot.counter(.sessionsChurned) == 1 && snapshot.counter(.sessionsReconnected) == 1)
    }

    @Test func withoutAPolicyADropEndsTheSession() throws {
        var driver = try MachineDriver(profile: Self.profile.replacingOccurrences(of: "reconnect: {attempts: 3, initial: 1s, max: 4s}", with: ""))
        try driver.logIn()
        driver.send(.connectionLost(.reset))
        #expect(driver.ended)
    }
}
