import Testing
import XMPPCore

@testable import SessionCore

/// The probing session's XEP-0202 time queries after login: one after the other, each answer
/// reported to the host as a clock sample (send and answer instants, the server's `<utc>`).
@Suite struct ServerTimeProbeTests {
    static let profile = SessionMachineTests.profile("  - login\n  - stay_online")

    @Test func theProbingSessionAsksTheServersTimeFiveTimesInTurn() throws {
        var driver = try MachineDriver(profile: Self.profile)
        driver.machine.probesServer = true
        try driver.logIn()
        var ids: [String] = []
        for answer in 1...SessionMachine.timeQueries {
            let queries = driver.sent().filter { $0.firstChild(named: "time", namespace: "urn:xmpp:time") != nil }
            #expect(queries.count == 1, "one query at a time (answer \(answer))")
            let id = try #require(queries.first?.attribute("id"))
            #expect(queries.first?.attribute("to") == "load.test" && queries.first?.attribute("type") == "get")
            ids.append(id)
            driver.advance(by: .milliseconds(3))
            try driver.receive(
                "<iq type='result' id='\(id)' from='load.test'><time xmlns='urn:xmpp:time'><tzo>+00:00</tzo><utc>2026-11-23T13:10:1\(answer)Z</utc></time></iq>"
            )
        }
        #expect(driver.sent().isEmpty, "no sixth query")
        #expect(Set(ids).count == SessionMachine.timeQueries)
        let answers = driver.host.timeAnswers
        #expect(answers.map(\.utc) == (1...5).map { "2026-11-23T13:10:1\($0)Z" })
        // Each round trip is the 3 ms the driver advanced, on the session clock.
        #expect(answers.allSatisfy { $0.received.nanoseconds - $0.sent.nanoseconds == 3_000_000 })
        #expect(driver.host.recorder.takeSnapshot(start: 0, end: 1).counter(.stepsCompleted) == 0, "not the profile's steps")
    }

    @Test func anErrorAnswerEndsTheQueriesAndOtherSessionsAskNothing() throws {
        var probing = try MachineDriver(profile: Self.profile)
        probing.machine.probesServer = true
        try probing.logIn()
        let id = try #require(probing.sent().first { $0.firstChild(named: "time", namespace: "urn:xmpp:time") != nil }?.attribute("id"))
        try probing.receive(
            "<iq type='error' id='\(id)' from='load.test'><error type='cancel'><service-unavailable xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>"
        )
        #expect(probing.sent().isEmpty && probing.host.timeAnswers.isEmpty)

        var plain = try MachineDriver(profile: Self.profile)
        try plain.logIn()
        #expect(!plain.sent().contains { $0.firstChild(named: "time", namespace: "urn:xmpp:time") != nil })
    }
}
