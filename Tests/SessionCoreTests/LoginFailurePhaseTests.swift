import LoadResults
import Testing
import XMPPCore

@testable import SessionCore

/// Every login failure names its phase (`SessionFailure.loginPhase`, `login_failures`), and the phases
/// a failed login did complete are recorded in the usual `login.<phase>` histograms.
@Suite struct LoginFailurePhaseTests {
    static let profile = SessionMachineTests.profile("  - login\n  - logout")

    /// How far a login gets before it fails, and the failure it meets there.
    enum Stop: String, CaseIterable {
        case refusedConnect, silentAfterHeader, wrongPassword, bindStall, bindRefused, resetAtSASL
    }

    struct Row: Sendable {
        let stop: Stop
        let phase: LoginPhase
        let kind: String
        /// Phases recorded (completed before the failure).
        let recorded: [String]
    }

    static let rows: [Row] = [
        Row(stop: .refusedConnect, phase: .connect, kind: "connect-refused", recorded: []),
        Row(stop: .silentAfterHeader, phase: .features, kind: "timeout-login", recorded: ["login.connect"]),
        Row(stop: .wrongPassword, phase: .sasl, kind: "sasl-not-authorized", recorded: ["login.connect", "login.features"]),
        Row(stop: .resetAtSASL, phase: .sasl, kind: "connection-reset", recorded: ["login.connect", "login.features"]),
        Row(stop: .bindStall, phase: .bind, kind: "timeout-login", recorded: ["login.connect", "login.features", "login.sasl"]),
        Row(stop: .bindRefused, phase: .bind, kind: "bind-not-allowed", recorded: ["login.connect", "login.features", "login.sasl"]),
    ]

    @Test(arguments: rows) func aFailedLoginNamesItsPhaseAndRecordsWhatItCompleted(_ row: Row) throws {
        var driver = try MachineDriver(profile: Self.profile)
        driver.send(.start)
        driver.advance(by: .milliseconds(2))
        switch row.stop {
        case .refusedConnect:
            driver.send(.connectFailed(.refused))
        default:
            driver.send(.connected)
            driver.advance(by: .milliseconds(3))
            if row.stop == .silentAfterHeader {
                driver.advance(by: .seconds(30))
                break
            }
            try driver.receive(
                "<stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>PLAIN</mechanism></mechanisms></stream:features>")
            driver.advance(by: .milliseconds(4))
            switch row.stop {
            case .wrongPassword:
                try driver.receive("<failure xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><not-authorized/></failure>")
            case .resetAtSASL:
                driver.send(.connectionLost(.reset))
            default:
                try driver.receive("<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>")
                try driver.receive("<stream:features><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/></stream:features>")
                if row.stop == .bindStall {
                    driver.advance(by: .seconds(30))
                } else {
                    try driver.receive(
                        "<iq type='error' id='bind1'><error type='cancel'><not-allowed xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>")
                }
            }
        }
        #expect(driver.ended)
        guard case .ended(let failure)? = driver.actions.last else {
            Issue.record("the session did not end: \(driver.actions)")
            return
        }
        #expect(failure == SessionFailure(error: failure!.error, loginPhase: row.phase))
        let snapshot = driver.host.recorder.takeSnapshot(start: 0, end: 1)
        #expect(snapshot.errors == [row.kind: 1])
        #expect(snapshot.loginFailures == [row.phase.rawValue: [row.kind: 1]])
        let phases = snapshot.latency.keys.filter { $0.hasPrefix("login.") }.sorted()
        #expect(phases == row.recorded.sorted())
        #expect(snapshot.latency["login"] == nil, "a failed login is no login latency")
        if row.stop == .wrongPassword {
            #expect(snapshot.latency["login.features"]?.count == 1)
            #expect(snapshot.latency["login.features"]!.maxMicroseconds >= 2_990)  // 3 ms, to 3 significant digits
        }
    }

    @Test func aSessionThatFailsAfterLoggingInNamesNoPhase() throws {
        var driver = try MachineDriver(profile: SessionMachineTests.profile("  - login\n  - stay_online"))
        try driver.logIn()
        #expect(driver.machine.isResting(atLeast: .seconds(1)))
        try driver.receive("<stream:error><conflict xmlns='urn:ietf:params:xml:ns:xmpp-streams'/></stream:error>")
        guard case .ended(let failure)? = driver.actions.last else {
            Issue.record("the session did not end")
            return
        }
        #expect(failure?.loginPhase == nil)
        #expect(failure?.error.kind == "stream-conflict")
        #expect(driver.host.recorder.takeSnapshot(start: 0, end: 1).loginFailures == nil)
    }

    @Test func aShortThinkIsNoRestALongOneIs() throws {
        var short = try MachineDriver(profile: SessionMachineTests.profile("  - login\n  - think: {constant: 500ms}\n  - logout"))
        try short.logIn()
        #expect(!short.machine.isResting(atLeast: .seconds(1)))
        var long = try MachineDriver(profile: SessionMachineTests.profile("  - login\n  - think: {constant: 5s}\n  - logout"))
        try long.logIn()
        #expect(long.machine.isResting(atLeast: .seconds(1)))
        #expect(!long.machine.isResting(atLeast: .seconds(10)))
    }
}
