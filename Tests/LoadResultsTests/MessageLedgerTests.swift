import Testing

@testable import LoadResults

/// The ledger with reordered, duplicated and missing stamps.
@Suite struct MessageLedgerTests {
    static func events(sent: [(UInt32, UInt32)], received: [(UInt32, UInt32, UInt32)]) -> MessageEvents {
        var events = MessageEvents()
        events.sent = sent.map { .init(sender: UInt64($0.0), sequence: $0.1) }
        events.received = received.map { .init(sender: UInt64($0.0), sequence: $0.1, receiver: $0.2) }
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

    /// `to: random` over a long soak: every sender reaches many receivers. The pairs kept for the order
    /// check stay bounded by messages in flight, and a reordering among them is still found.
    @Test func pairsStayBoundedWithRandomTargetsAndReorderingIsStillFound() {
        var ledger = MessageLedger()
        var generator = SystemRandomNumberGenerator()
        for round in UInt32(1)...40 {
            // 200 senders, each sends one message per round to a random one of 200 receivers.
            let sent = (UInt32(0)..<200).map { ($0, round) }
            let received = sent.map { ($0.0, $0.1, UInt32.random(in: 0..<200, using: &generator)) }
            ledger.apply(Self.events(sent: sent, received: received))
        }
        #expect(ledger.trackedPairs <= 4096, "kept \(ledger.trackedPairs) pairs for 8,000 messages all received")
        #expect(ledger.totals.reordered == 0 && ledger.totals.duplicated == 0)
        // In flight: sender 5's 41st and 42nd arrive at receiver 9 in the wrong order.
        ledger.apply(Self.events(sent: [(5, 41), (5, 42)], received: [(5, 42, 9)]))
        ledger.apply(Self.events(sent: [], received: [(5, 41, 9)]))
        #expect(ledger.totals.reordered == 1)
        #expect(ledger.finish().lost == 0)
    }

    /// A soak's outage loses one message of every sender; the receipts that follow must not pile up
    /// above the gap for the rest of the run (memory grew with every message sent after an outage).
    /// Past `maxHeldAbove` later receipts the gap is listed as missing; a late arrival of it counts as
    /// received, a second one as a duplicate, and what never came is lost at the end.
    @Test func aLostMessageDoesNotHoldLaterReceiptsInMemory() {
        var ledger = MessageLedger()
        let senders = UInt32(0)..<50
        // Each sender's message 3 is lost; 2,000 more of each arrive.
        let sent = senders.flatMap { sender in (UInt32(1)...2003).map { (sender, $0) } }
        let received = sent.filter { $0.1 != 3 }.map { ($0.0, $0.1, ($0.0 + 1) % 50) }
        ledger.apply(Self.events(sent: sent, received: received))
        #expect(ledger.heldSequences <= senders.count * (MessageLedger.maxHeldAbove + 1))
        #expect(ledger.trackedPairs <= 4096)
        #expect(ledger.outstanding == UInt64(senders.count))
        // Sender 0's message 3 arrives very late: received, not a duplicate; then again: a duplicate.
        ledger.apply(Self.events(sent: [], received: [(0, 3, 1)]))
        #expect(ledger.totals.duplicated == 0 && ledger.received == UInt64(received.count + 1))
        ledger.apply(Self.events(sent: [], received: [(0, 3, 1)]))
        #expect(ledger.totals.duplicated == 1)
        #expect(ledger.finish().lost == UInt64(senders.count - 1))
    }

    /// Generators sharing a `--run-id` have overlapping serials: the sender key's generator part
    /// keeps the same serial of two generators apart (no false duplicates, no false losses).
    @Test func theSameSerialOfTwoGeneratorsIsTwoSenders() {
        var ledger = MessageLedger()
        let a = UInt64(7) << 32 | 1
        let b = UInt64(9) << 32 | 1
        var events = MessageEvents()
        events.sent = (1...5).map { .init(sender: a, sequence: $0) } + (1...5).map { .init(sender: b, sequence: $0) }
        events.received = (1...5).map { .init(sender: a, sequence: $0, receiver: 3) } + (1...5).map { .init(sender: b, sequence: $0, receiver: 3) }
        let found = ledger.apply(events)
        #expect(found.duplicated == 0 && found.reordered == 0)
        #expect(ledger.finish().lost == 0)
        #expect(ledger.distinctReceiptsBySender == [a: 5, b: 5])
    }
}
