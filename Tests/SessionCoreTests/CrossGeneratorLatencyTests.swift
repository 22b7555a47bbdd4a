import Testing
import XMPPCore

@testable import SessionCore

/// Stamps of a `--segment` run carry the sender generator's clock; a receiver on another generator
/// places the send time on its own clock before it records latency.
@Suite struct CrossGeneratorLatencyTests {
    static let second: Int64 = 1_000_000_000

    /// A logged-in session whose generator's clock is `clock`, 10 s into the run.
    static func receiver(clock: MessageStamp.Clock?) throws -> MachineDriver {
        var driver = try MachineDriver(profile: SessionMachineTests.profile("  - login\n  - stay_online"))
        driver.host.stampClock = clock
        try driver.logIn()
        _ = driver.sent()
        driver.advance(to: SessionInstant(nanoseconds: 10 * Self.second))
        return driver
    }

    static func message(sent: Int64, clock: MessageStamp.Clock?) -> String {
        var stamp = MessageStamp(runID: "run-1", sender: 7, sequence: 1, sentNanos: UInt64(sent), intendedNanos: UInt64(sent))
        stamp.clock = clock
        return "<message to='user1@load.test' type='chat'>\(stamp.element.serialized(parentNamespace: "jabber:client"))</message>"
    }

    struct Row: Sendable, CustomTestStringConvertible {
        let name: String
        let receiver: MessageStamp.Clock?
        let sender: MessageStamp.Clock?
        /// The sender's session-clock reading of the send (ms).
        let sentMilliseconds: Int64
        /// The latency the receiver records (ms).
        let latencyMilliseconds: UInt64
        var testDescription: String { name }
    }

    @Test(arguments: [
        // One generator's own stamps (no clock): its own clock, 10 s − 9.99 s.
        Row(name: "same generator", receiver: nil, sender: nil, sentMilliseconds: 9_990, latencyMilliseconds: 10),
        // The sender started its clock 2 s after the receiver (wall clocks agree): its 7.99 s is our 9.99 s.
        Row(
            name: "origins 2 s apart", receiver: .init(wallOrigin: 100 * second), sender: .init(wallOrigin: 102 * second),
            sentMilliseconds: 7_990, latencyMilliseconds: 10),
        // The sender's wall clock runs 300 ms ahead (offset −300 ms vs our 0, ±5 ms each): measured,
        // so corrected. Its origin reads 102.3 s on its clock, 102 s on ours.
        Row(
            name: "wall clocks disagree",
            receiver: .init(wallOrigin: 100 * second, offset: 0, uncertainty: 5_000_000),
            sender: .init(wallOrigin: 102 * second + 300_000_000, offset: -300_000_000, uncertainty: 5_000_000),
            sentMilliseconds: 7_990, latencyMilliseconds: 10),
        // A disagreement within the uncertainties (whole-second server): the wall clocks are trusted.
        Row(
            name: "disagreement within uncertainty",
            receiver: .init(wallOrigin: 100 * second, offset: 200_000_000, uncertainty: 500_000_000),
            sender: .init(wallOrigin: 102 * second, offset: -100_000_000, uncertainty: 500_000_000),
            sentMilliseconds: 7_990, latencyMilliseconds: 10),
    ])
    func theReceiverPlacesTheSendOnItsOwnClock(_ row: Row) throws {
        var driver = try Self.receiver(clock: row.receiver)
        try driver.receive(Self.message(sent: row.sentMilliseconds * 1_000_000, clock: row.sender))
        let snapshot = driver.host.recorder.takeSnapshot(start: 0, end: 10)
        #expect(snapshot.counter(.messagesReceived) == 1)
        #expect(SessionMachineTests.within(snapshot.serviceLatency["message"]?.maxMicroseconds, row.latencyMilliseconds * 1000))
        #expect(SessionMachineTests.within(snapshot.latency["message"]?.maxMicroseconds, row.latencyMilliseconds * 1000))
    }

    @Test func stampsCarryTheClockOnlyWhenTheHostHasOne() throws {
        var shared = try MachineDriver(
            profile: SessionMachineTests.profile("  - login\n  - message: {to: user2@load.test, body: hi}\n  - stay_online"))
        shared.host.stampClock = .init(wallOrigin: 5, offset: -3, uncertainty: 2)
        try shared.logIn()
        let stamped = try #require(shared.sent().first { $0.name == "message" })
        #expect(MessageStamp(in: stamped)?.clock == .init(wallOrigin: 5, offset: -3, uncertainty: 2))

        var single = try MachineDriver(
            profile: SessionMachineTests.profile("  - login\n  - message: {to: user2@load.test, body: hi}\n  - stay_online"))
        try single.logIn()
        let plain = try #require(single.sent().first { $0.name == "message" })
        let stamp = try #require(plain.firstChild(named: "stamp", namespace: XMPPNamespace.stamp))
        #expect(stamp.attributes.map(\.name) == ["r", "s", "q", "t", "i"])
    }

    /// Generators sharing a `--run-id` without `--segment` put their key in every stamp (`g`), and
    /// the ledger keys senders by (generator, serial): the same serial of two generators is two senders.
    @Test func stampsOfGeneratorsSharingARunIDCarryTheirKey() throws {
        var driver = try MachineDriver(
            profile: SessionMachineTests.profile("  - login\n  - message: {to: user2@load.test, body: hi}\n  - stay_online"),
            generatorKey: 0xBEEF)
        try driver.logIn()
        let sent = try #require(driver.sent().first { $0.name == "message" })
        let stamp = try #require(MessageStamp(in: sent))
        #expect(stamp.generator == 0xBEEF && stamp.sender == 0)
        #expect(stamp.senderKey == UInt64(0xBEEF) << 32)
        #expect(driver.host.recorder.takeSnapshot(start: 0, end: 1).messageEvents.sent.map(\.sender) == [UInt64(0xBEEF) << 32])
        // A key of 0 is no key (stamps of older versions parse as before).
        var old = MessageStamp(runID: "run-1", sender: 3, sequence: 1, sentNanos: 1, intendedNanos: 1)
        old.generator = nil
        #expect(MessageStamp(in: XMLElement("message", children: [.element(old.element)]))?.senderKey == 3)
    }
}
