import Testing

@testable import LoadResults

/// The ledger with reordered, duplicated and missing stamps.
@Suite struct MessageLedgerTests {
    static func events(sent: [(UInt32, UInt32)], received: [(UInt32, UInt32, UInt32)]) -> MessageEvents {
        var events = MessageEvents()
        events.sent = sent.map { .init(sender: $0.0, sequence: $0.1) }
        events.received = received.map { .init(sender: $0.0, sequence: $0.1, receiver: $0.2) }
        return events
    }

    @Test func inOrderDeliveryIsClean() {
        var ledger = MessageLedger()
        let found = ledger.apply(Self.events(sent: (1...100).map { (7, $0) }, received: (1...100).map { (7, $0, 9) }))
        #expect(found == LedgerCounts())
        #expect(ledger.outstanding == 0)
        #expect(ledger.finish() == LedgerCounts())
        #expect(ledger.sent == 100 && ledger.received == 100)
    }

    @Test func duplicatesAreCountedOnce() {
        var ledger = MessageLedger()
        ledger.apply(Self.events(sent: [(1, 1), (1, 2), (1, 3)], received: [(1, 1, 2), (1, 2, 2), (1, 2, 2), (1, 3, 2), (1, 1, 2)]))
        #expect(ledger.totals.duplicated == 2)
        #expect(ledger.received == 3)
        #expect(ledger.finish().lost == 0)
    }

    @Test func reorderingIsPerSenderReceiverPair() {
        var ledger = MessageLedger()
        // Sender 1 → receiver 2 gets 1, 3, 2 (one reordering); sender 1 → receiver 3 gets 4 after 5 is not
        // seen by receiver 3, so its own order 4 is fine.
        ledger.apply(Self.events(sent: (1...5).map { (1, $0) }, received: [(1, 1, 2), (1, 3, 2), (1, 2, 2), (1, 5, 3), (1, 4, 2)]))
        #expect(ledger.totals.reordered == 1)
        #expect(ledger.totals.duplicated == 0)
    }

    @Test func missingMessagesAreLostOnlyAtTheEnd() {
        var ledger = MessageLedger()
        ledger.apply(Self.events(sent: (1...10).map { (4, $0) }, received: [(4, 1, 5), (4, 2, 5), (4, 4, 5)]))
        #expect(ledger.outstanding == 7)
        #expect(ledger.totals.lost == 0, "in flight is not lost yet")
        // A late batch (next interval) brings some, including one received before its send event was seen.
        ledger.apply(Self.events(sent: [(6, 1)], received: [(4, 3, 5), (4, 10, 5), (6, 1, 4)]))
        #expect(ledger.outstanding == 5)
        #expect(ledger.finish().lost == 5)
        #expect(ledger.totals.lost == 5)
    }

    @Test func memoryStaysBoundedByInFlightMessages() {
        var ledger = MessageLedger()
        for batch in 0..<100 {
            let base = UInt32(batch * 100)
            ledger.apply(Self.events(sent: (1...100).map { (1, base + $0) }, received: (1...100).map { (1, base + $0, 2) }))
        }
        #expect(ledger.outstanding == 0)
        #expect(ledger.received == 10_000)
        #expect(ledger.finish() == LedgerCounts())
    }
}
