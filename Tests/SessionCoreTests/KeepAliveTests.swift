import LoadProfile
import LoadResults
import SessionCore
import Testing
import XMPPCore

/// Keep-alives: timed client pings, a dead connection found by an unanswered ping, whitespace.
@Suite struct KeepAliveTests {
    static func profile(_ keepalive: String, reconnect: String = "") -> String {
        """
        name: ka
        login: {sasl: PLAIN, tls: none, resource: r1}
        keepalive: \(keepalive)
        \(reconnect)
        steps: [login, stay_online]
        """
    }

    @Test func aClientPingGoesOutEachIntervalAndItsRoundTripIsRecorded() throws {
        var driver = try MachineDriver(profile: Self.profile("{ping: 10s}"))
        try driver.logIn()
        _ = driver.sent()
        let loggedIn = driver.now
        #expect(driver.timeoutAt == loggedIn + .seconds(10))
        driver.advance(by: .seconds(10))
        let ping = try #require(driver.sent().first)
        #expect(ping.name == "iq" && ping.attribute("to") == "load.test" && ping.firstChild(named: "ping", namespace: XMPPNamespace.ping) != nil)
        driver.advance(by: .milliseconds(7))
        try driver.receive("<iq type='result' id='\(ping.attribute("id")!)' from='load.test'/>")
        #expect(driver.timeoutAt == loggedIn + .seconds(20))
        driver.advance(by: .seconds(10))
        #expect(driver.sent().count == 1, "the next ping")
        let snapshot = driver.host.recorder.takeSnapshot(start: 0, end: 1)
        #expect(snapshot.latency["keepalive.ping"]?.count == 1)
        #expect(SessionMachineTests.within(snapshot.latency["keepalive.ping"]?.maxMicroseconds, 7000))
        #expect(snapshot.errors.isEmpty)
    }

    @Test func aPingUnansweredForAWholeIntervalIsADeadConnection() throws {
        var driver = try MachineDriver(profile: Self.profile("{ping: 10s}"))
        try driver.logIn()
        driver.advance(by: .seconds(20))
        #expect(driver.ended)
        #expect(driver.host.recorder.takeSnapshot(start: 0, end: 1).errors == ["timeout-keepalive": 1])
    }

    @Test func aDeadConnectionFoundByKeepAliveReconnectsUnderAPolicy() throws {
        var driver = try MachineDriver(profile: Self.profile("{ping: 10s}", reconnect: "reconnect: {attempts: 2, initial: 1s}"))
        try driver.logIn()
        driver.advance(by: .seconds(20))
        #expect(!driver.ended)
        #expect(driver.actions.last == .close)
        driver.advance(by: .seconds(1))
        #expect(driver.actions.last == .connectFirst)
    }

    @Test func whitespaceKeepAliveSendsASpace() throws {
        var driver = try MachineDriver(profile: Self.profile("{whitespace: 30s}"))
        try driver.logIn()
        driver.advance(by: .seconds(30))
        #expect(driver.actions.last == .sendRaw(" "))
        driver.advance(by: .seconds(60))
        #expect(!driver.ended, "whitespace expects no answer")
    }
}
