/// Checks every stamped message of a run for loss, duplication and order, from the events the loops
/// recorded (measurement rule 6). Runs on the collector, fed at each interval; no locks needed.
///
/// Each sender's sequence numbers run 1, 2, 3, … Per sender it keeps the highest number sent, a
/// watermark at or below which every number was received or is listed as missing, the numbers
/// missing below it, and the numbers received above it. The watermark advances over what arrived
/// in order, and past a gap once `maxHeldAbove` later numbers arrived (the gap is then listed as
/// missing: a message lost in an outage must not hold every later receipt in memory for the rest
/// of a soak). So memory is bounded by messages in flight plus messages not received, never by
/// messages sent. A missing number that arrives late counts as received (not as a duplicate).
/// Order is checked per sender→receiver pair; a pair's last sequence is forgotten once it is at or below
/// the sender's watermark, so with `to: random` the pairs kept are bounded the same way, not by
/// senders × receivers (a late receipt below a forgotten pair's last is not counted as reordered).
/// A message not received by `finish()` (called after the run's grace period) is lost.
public struct MessageLedger: Sendable {
    private struct SenderState: Sendable {
        var highestSent: UInt32 = 0
        var watermark: UInt32 = 0
        /// Received, above `watermark` (at most `maxHeldAbove`).
        var above: Set<UInt32> = []
        /// Not received, at or below `watermark` (the watermark moved past them).
        var missing: Set<UInt32> = []
        var received: UInt64 = 0
        /// Distinct receipts (`received` is settled by `finish()`; this is not)..
        var distinct: UInt64 = 0
    }

    /// Receipts held above a gap before the watermark moves past it (the gap listed as missing).
    static let maxHeldAbove = 256

    /// A sender→receiver pair, for the order check.
    private struct Pair: Hashable, Sendable {
        var sender: UInt64
        var receiver: UInt32
    }

    /// By sender key (`MessageEvents`: generator key and serial).
    private var senders: [UInt64: SenderState] = [:]
    private var lastFromSenderAtReceiver: [Pair: UInt32] = [:]
    /// Prune the pairs when there are more than this many (doubles with what survives a prune).
    private var pairsToPruneAt = 4096
    public private(set) var totals = LedgerCounts()
    public private(set) var sent: UInt64 = 0
    public private(set) var received: UInt64 = 0

    public init() {}

    /// Applies a batch of events; returns what this batch revealed (duplicates and reorderings).
    @discardableResult
    public mutating func apply(_ events: MessageEvents) -> LedgerCounts {
        var found = LedgerCounts()
        for event in events.sent {
            sent += 1
            senders[event.sender, default: SenderState()].highestSent = max(senders[event.sender]?.highestSent ?? 0, event.sequence)
        }
        for event in events.received {
            var state = senders[event.sender, default: SenderState()]
            let isNew =
                event.sequence <= state.watermark
                ? state.missing.remove(event.sequence) != nil : state.above.insert(event.sequence).inserted
            if !isNew {
                found.duplicated += 1
            } else {
                received += 1
                state.received += 1
                state.distinct += 1
                while state.above.remove(state.watermark + 1) != nil { state.watermark += 1 }
                while state.above.count > Self.maxHeldAbove {
                    // The next number is overdue: list it as missing and move on.
                    state.watermark += 1
                    state.missing.insert(state.watermark)
                    while state.above.remove(state.watermark + 1) != nil { state.watermark += 1 }
                }
                let pair = Pair(sender: event.sender, receiver: event.receiver)
                if let last = lastFromSenderAtReceiver[pair], event.sequence < last {
                    found.reordered += 1
                } else {
                    lastFromSenderAtReceiver[pair] = event.sequence
                }
            }
            senders[event.sender] = state
        }
        totals.add(found)
        if lastFromSenderAtReceiver.count > pairsToPruneAt { prunePairs() }
        return found
    }

    /// Distinct messages received per sender key (senders of other generators included), for
    /// `SegmentLedger`.
    public var distinctReceiptsBySender: [UInt64: UInt64] {
        senders.compactMapValues { $0.distinct > 0 ? $0.distinct : nil }
    }

    /// Forgets the pairs whose last sequence is at or below their sender's watermark: a message at or
    /// below it is a duplicate, so those entries can no longer reveal a reordering (results unchanged).
    private mutating func prunePairs() {
        lastFromSenderAtReceiver = lastFromSenderAtReceiver.filter { pair, last in
            last > (senders[pair.sender]?.watermark ?? 0)
        }
        pairsToPruneAt = max(4096, lastFromSenderAtReceiver.count * 2)
    }

    /// The sender→receiver pairs kept for the order check (bounded by messages in flight).
    var trackedPairs: Int { lastFromSenderAtReceiver.count }

    /// Sequence numbers held per sender, summed: received above a gap plus listed as missing.
    var heldSequences: Int { senders.values.reduce(0) { $0 + $1.above.count + $1.missing.count } }

    /// Messages sent and not (yet) received.
    public var outstanding: UInt64 {
        senders.values.reduce(0) { total, state in
            total + UInt64(state.highestSent) - min(UInt64(state.highestSent), state.received)
        }
    }

    /// Ends the run: whatever is still outstanding is lost. Returns the final totals.
    @discardableResult
    public mutating func finish() -> LedgerCounts {
        let lost = outstanding
        totals.lost += lost
        for key in senders.keys { senders[key]!.received = UInt64(senders[key]!.highestSent) }
        return LedgerCounts(lost: lost)
    }
}
