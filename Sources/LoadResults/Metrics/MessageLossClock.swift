/// When were the lost messages sent? Fed the same stamped-message events as `MessageLedger`, one
/// batch per interval, it answers at the run's end how many of the messages never received were sent
/// in each interval (`MessageLossBucket`s), so a report can tell losses inside an outage window from
/// losses outside it.
///
/// Each sender's sequence numbers run 1, 2, 3, … in the order sent, so the highest number a sender had
/// sent by the end of each interval (a *mark*) says in which interval every number was sent. Per
/// sender it keeps a watermark below which every number is settled (received, or recorded as missing),
/// the numbers received above it, and the marks not yet settled. A mark older than `horizon` seconds
/// settles: its numbers still unreceived are recorded as missing with their interval, and removed again
/// if they arrive later (a late delivery is not a loss). `finish()` counts what is still missing plus
/// the unreceived numbers of the marks younger than the horizon. Memory: per sender, the marks of the
/// last `horizon` seconds and the numbers received out of order; per missing message one entry; per
/// interval two numbers. The counts equal `MessageLedger`'s `lost` for the same events (a duplicate is
/// ignored; a number received that was never sent is not a loss).
public struct MessageLossClock: Sendable {
    private struct Mark: Sendable {
        var interval: Int32
        var highest: UInt32
    }

    private struct SenderState: Sendable {
        var highestSent: UInt32 = 0
        var watermark: UInt32 = 0
        var above: Set<UInt32> = []
        var marks: [Mark] = []

        /// Moves the watermark over the numbers received just above it.
        mutating func advanceWatermark() {
            while above.remove(watermark &+ 1) != nil { watermark += 1 }
        }

        /// Settles every number up to `highest`: returns those not received and moves the watermark there.
        mutating func unreceived(through highest: UInt32) -> [UInt32] {
            guard highest > watermark else { return [] }
            var result: [UInt32] = []
            for sequence in (watermark + 1)...highest where above.remove(sequence) == nil { result.append(sequence) }
            watermark = highest
            return result
        }
    }

    /// Seconds after an interval's end when its unreceived messages are recorded as missing.
    public let horizon: Double
    /// By sender key (`MessageEvents`).
    private var senders: [UInt64: SenderState] = [:]
    private var intervals: [(start: Double, end: Double)] = []
    /// A message: its sender's key and sequence number.
    private struct Message: Hashable, Sendable {
        var sender: UInt64
        var sequence: UInt32
    }

    /// Message → index of the interval it was sent in, for messages unreceived past the horizon.
    private var missing: [Message: Int32] = [:]

    public init(horizon: Double = 60) { self.horizon = horizon }

    /// Adds the events of the interval `start`–`end` (seconds since the run's start, in time order).
    public mutating func record(_ events: MessageEvents, start: Double, end: Double) {
        let index = Int32(intervals.count)
        intervals.append((start, end))
        var touched: Set<UInt64> = []
        for event in events.sent {
            senders[event.sender, default: SenderState()].highestSent = max(senders[event.sender]?.highestSent ?? 0, event.sequence)
            touched.insert(event.sender)
        }
        for sender in touched {
            var state = senders[sender]!
            if state.marks.last?.highest != state.highestSent && state.highestSent > state.watermark {
                state.marks.append(Mark(interval: index, highest: state.highestSent))
            }
            senders[sender] = state
        }
        for event in events.received {
            var state = senders[event.sender, default: SenderState()]
            if event.sequence <= state.watermark {
                missing.removeValue(forKey: Message(sender: event.sender, sequence: event.sequence))
            } else {
                state.above.insert(event.sequence)
                state.advanceWatermark()
            }
            senders[event.sender] = state
        }
        let settleBefore = end - horizon
        for (sender, var state) in senders {
            guard let first = state.marks.first, intervals[Int(first.interval)].end <= settleBefore else { continue }
            while let mark = state.marks.first, intervals[Int(mark.interval)].end <= settleBefore {
                state.marks.removeFirst()
                for sequence in state.unreceived(through: mark.highest) {
                    missing[Message(sender: sender, sequence: sequence)] = mark.interval
                }
                state.advanceWatermark()
            }
            senders[sender] = state
        }
    }

    /// The run is over: every message never received, counted by the interval it was sent in (only
    /// intervals with losses, in time order).
    public func finish() -> [MessageLossBucket] {
        var lost: [Int32: UInt64] = [:]
        for interval in missing.values { lost[interval, default: 0] += 1 }
        for var state in senders.values {
            while let mark = state.marks.first {
                state.marks.removeFirst()
                lost[mark.interval, default: 0] += UInt64(state.unreceived(through: mark.highest).count)
                state.advanceWatermark()
            }
        }
        return lost.filter { $0.value > 0 }.sorted { $0.key < $1.key }.map { index, count in
            let interval = intervals[Int(index)]
            return MessageLossBucket(start: interval.start, end: interval.end, lost: count)
        }
    }
}

/// Messages never received that were sent in one interval (seconds since the run's start).
public struct MessageLossBucket: Sendable, Equatable, Codable {
    public var start: Double
    public var end: Double
    public var lost: UInt64

    public init(start: Double, end: Double, lost: UInt64) {
        self.start = start
        self.end = end
        self.lost = lost
    }
}
