import Foundation
import Testing

@testable import LoadResults

/// Reconciling the message ledgers of the generators of one `--segment` run: a message sent by one
/// generator and received by another is delivered, not lost; group chat completeness counts every
/// generator's occupants.
@Suite struct SegmentLedgerTests {
    /// One generator's run: its ledger fed with what it sent and what it received.
    struct Generator {
        var recorder = MetricsRecorder(registry: MetricRegistry())
        var ledger = MessageLedger()
        let segment: Int
        /// A whole-run generator sharing a `--run-id`: its stamp key (senders' keys carry it).
        var key: UInt32? = nil

        /// `sender`: a serial of this generator (its key added to the sender key).
        mutating func send(_ sender: UInt32, _ sequence: UInt32) {
            recorder.messageSent(sender: UInt64(key ?? 0) << 32 | UInt64(sender), sequence: sequence)
        }
        /// A receipt from `sender` of the generator with key `from` (none: segments, no keys).
        mutating func receive(_ sender: UInt32, _ sequence: UInt32, by receiver: UInt32, from generator: UInt32? = nil) {
            recorder.messageReceived(sender: UInt64(generator ?? 0) << 32 | UInt64(sender), sequence: sequence, receiver: receiver)
        }

        /// The run's end: the snapshot, the ledger applied and finished, the summary as `run` writes it.
        mutating func finish(of count: Int) -> (summary: RunSummary, total: IntervalSnapshot) {
            var total = recorder.takeSnapshot(start: 0, end: 10)
            total.ledger = ledger.apply(total.messageEvents)
            let final = ledger.finish()
            var counts = ledger.totals
            counts.lost = final.lost
            total.messageEvents = MessageEvents()
            var summary = RunSummary(
                runID: "shared", profile: "chat", startedAt: Date(timeIntervalSince1970: 0), endedAt: Date(timeIntervalSince1970: 10),
                stopReason: "completed", total: total, healths: [], peakConcurrent: 2, ledger: counts)
            summary.ledger = SegmentLedger(
                segment: segment, of: count, sent: ledger.sent, receivedBySender: ledger.distinctReceiptsBySender, generator: key)
            return (summary, total)
        }
    }

    /// Two generators (segments 0 and 1 of 2; sender ids are serial × 2 + segment). Sender 0 (gen 0)
    /// sends 5 to a user of gen 1, which gets 1, 3, 2, 4, 2 (5 is lost, 2 late and twice); sender 2 (gen 0) sends 3
    /// to gen 0's own user 4; sender 1 (gen 1) sends 4 to gen 0's user 0, which gets them all.
    static func twoGenerators() -> [(summary: RunSummary, total: IntervalSnapshot)] {
        var zero = Generator(segment: 0)
        var one = Generator(segment: 1)
        for sequence in UInt32(1)...5 { zero.send(0, sequence) }
        for sequence in UInt32(1)...3 { zero.send(2, sequence) }
        for sequence in UInt32(1)...4 { one.send(1, sequence) }
        for sequence: UInt32 in [1, 3, 2, 4, 2] { one.receive(0, sequence, by: 3) }
        for sequence in UInt32(1)...3 { zero.receive(2, sequence, by: 4) }
        for sequence in UInt32(1)...4 { zero.receive(1, sequence, by: 0) }
        return [zero.finish(of: 2), one.finish(of: 2)]
    }

    static func merged(_ runs: [(summary: RunSummary, total: IntervalSnapshot)]) -> MergedResults {
        var timeline = MergedResults.Timeline()
        var interval = IntervalSnapshot()
        for run in runs { interval.merge(run.total) }
        timeline.add(interval)
        return MergedResults(
            directories: runs.indices.map { "gen-\($0)" }, manifests: [], summaries: runs.map(\.summary), timeline: timeline)
    }

    @Test func eachGeneratorAloneCountsWhatOthersReceivedAsLost() {
        let runs = Self.twoGenerators()
        #expect(runs.map(\.summary.messages.lost) == [5, 4])
        #expect(runs[0].summary.ledger == SegmentLedger(segmentCount: 2, segments: [0], sent: [8, 0], received: [3, 4], crossed: 4))
        #expect(runs[1].summary.ledger == SegmentLedger(segmentCount: 2, segments: [1], sent: [0, 4], received: [4, 0], crossed: 4))
    }

    @Test func reportReconcilesSendsAndReceiptsAcrossGenerators() {
        let results = Self.merged(Self.twoGenerators())
        let messages = results.summary.messages
        #expect(messages.sent == 12 && messages.received == 12)
        // Only sender 0's fifth message reached nobody; the duplicate was seen by its receiver.
        #expect(messages.lost == 1 && messages.duplicated == 1 && messages.reordered == 1)
        let ledger = results.summary.ledger
        #expect(ledger?.segments == [0, 1] && ledger?.delivered == 11 && ledger?.crossed == 8 && ledger?.lost == 1)
        #expect(results.ledgerProblem == nil)
    }

    @Test func mergingIsAssociativeAndCommutative() throws {
        func ledger(_ segment: Int, _ sent: UInt64, _ received: [UInt64]) -> SegmentLedger {
            var sentBySegment: [UInt64] = [0, 0, 0]
            sentBySegment[segment] = sent
            return SegmentLedger(
                segmentCount: 3, segments: [segment], sent: sentBySegment, received: received, crossed: received.reduce(0, +) - received[segment])
        }
        let a = ledger(0, 10, [3, 2, 2])
        let b = ledger(1, 9, [4, 3, 1])
        let c = ledger(2, 6, [3, 4, 3])
        let all = try SegmentLedger.merged([a, b, c])
        #expect(all == (try SegmentLedger.merged([try SegmentLedger.merged([c, a])!, b])))
        #expect(all == SegmentLedger(segmentCount: 3, segments: [0, 1, 2], sent: [10, 9, 6], received: [10, 9, 6], crossed: 16))
        #expect(all?.lost == 0)
        // Without segment 2's directory: what its generator received cannot be seen (3 of segment 0's and
        // 4 of segment 1's messages count as lost), and its senders' receipts are not matched.
        let two = try SegmentLedger.merged([a, b])
        #expect(two?.lost == 7 && two?.receivedFromUncovered == 3)
    }

    struct ProblemRow: Sendable, CustomTestStringConvertible {
        let ledgers: [SegmentLedger]
        let problem: SegmentLedger.MergeProblem
        var testDescription: String { problem.description }
    }

    @Test(arguments: [
        ProblemRow(
            ledgers: [
                SegmentLedger(segmentCount: 2, segments: [0], sent: [1, 0], received: [1, 0], crossed: 0),
                SegmentLedger(segmentCount: 1, segments: [0], sent: [1], received: [1], crossed: 0),
            ], problem: .differentSegmentCounts([1, 2])),
        ProblemRow(
            ledgers: [
                SegmentLedger(segmentCount: 2, segments: [1], sent: [0, 1], received: [0, 1], crossed: 0),
                SegmentLedger(segmentCount: 2, segments: [1], sent: [0, 1], received: [0, 1], crossed: 0),
            ], problem: .segmentTwice(1)),
        ProblemRow(
            ledgers: [SegmentLedger(segmentCount: 2, segments: [0], sent: [1], received: [1, 0], crossed: 0)],
            problem: .malformed),
    ])
    func ledgersOfDifferentRunsAreNotReconciled(_ row: ProblemRow) {
        #expect(throws: row.problem) { try SegmentLedger.merged(row.ledgers) }
    }

    @Test func aProblemLeavesEachGeneratorsOwnCounts() {
        var runs = Self.twoGenerators()
        runs[1].summary.ledger?.segments = [0]
        let results = Self.merged(runs)
        #expect(results.ledgerProblem == .segmentTwice(0))
        #expect(results.summary.messages.lost == 9)
        #expect(results.summary.ledger == nil)
    }

    @Test func olderSummariesWithoutLedgerKeepTheirLosses() throws {
        var runs = Self.twoGenerators()
        runs[0].summary.ledger = nil
        let results = Self.merged(runs)
        #expect(results.summary.messages.lost == 9 && results.ledgerProblem == nil)
        // And the field is optional in summary.json.
        let encoded = try ResultsDirectory.encoder.encode(runs[0].summary)
        #expect(try ResultsDirectory.decoder.decode(RunSummary.self, from: encoded).ledger == nil)
        let withLedger = try ResultsDirectory.encoder.encode(runs[1].summary)
        #expect(String(decoding: withLedger, as: UTF8.self).contains("\"segment_count\""))
        #expect(try ResultsDirectory.decoder.decode(RunSummary.self, from: withLedger) == runs[1].summary)
    }

    @Test func eachGeneratorsClockIsKeptBySegment() {
        var runs = Self.twoGenerators()
        runs[0].summary.clock = ClockOffset(offsetMilliseconds: 1.5, uncertaintyMilliseconds: 0.5, samples: 5)
        let results = Self.merged(runs)
        #expect(results.clocks == ["0/2": ClockOffset(offsetMilliseconds: 1.5, uncertaintyMilliseconds: 0.5, samples: 5)])
        runs[0].summary.ledger = nil
        #expect(Self.merged(runs).clocks.keys.sorted() == ["#1"])
        // One directory's report keeps its clock in the summary; several have one per generator.
        #expect(Self.merged([runs[0]]).summary.clock == runs[0].summary.clock && results.summary.clock == nil)
    }

    @Test func groupChatCompletenessCountsEveryGeneratorsOccupants() {
        // A room with one occupant on generator 0 and two on generator 1: each sender saw 3 occupants.
        var zero = MetricsRecorder(registry: MetricRegistry())
        var one = MetricsRecorder(registry: MetricRegistry())
        let room = "lobby@conference.load.test"
        zero.groupchatSent(room: room, occupants: 3)
        one.groupchatSent(room: room, occupants: 3)
        for _ in 0..<2 { zero.groupchatReceived(room: room) }
        for _ in 0..<4 { one.groupchatReceived(room: room) }
        let snapshots = [zero.takeSnapshot(start: 0, end: 5), one.takeSnapshot(start: 0, end: 5)]
        // Alone one looks incomplete (2 of 3) and the other overfull (4 of 3); together every occupant
        // got every message.
        #expect(snapshots.map { $0.rooms[room]?.completeness ?? 0 }.map { ($0 * 3).rounded() } == [2, 4])
        var timeline = MergedResults.Timeline()
        var merged = snapshots[0]
        merged.merge(snapshots[1])
        timeline.add(merged)
        let results = MergedResults(directories: ["a", "b"], manifests: [], summaries: [], timeline: timeline)
        #expect(results.summary.rooms[room] == RunSummary.RoomSummary(sent: 2, expected: 6, received: 6, completeness: 1))
    }

    /// The README's cross-node example: two whole runs sharing `--run-id cross-1`, no `--segment`.
    /// Their serials overlap (both have a sender 0), so stamps carry each generator's key: node 1
    /// (key 7) sends 10 to sessions of node 2 (key 9), which also sends 4 to its own session from its
    /// own sender 0. Alone, node 1 counts its 10 as lost; merged, every message is delivered.
    @Test func generatorsSharingARunIDReconcileWithoutSegments() throws {
        var node1 = Generator(segment: 0, key: 7)
        var node2 = Generator(segment: 0, key: 9)
        for sequence in UInt32(1)...10 { node1.send(0, sequence) }
        for sequence in UInt32(1)...4 { node2.send(0, sequence) }
        for sequence in UInt32(1)...10 { node2.receive(0, sequence, by: 1, from: 7) }
        // Same serial 0 and sequences 1…4 from node 2's own sender: not duplicates of node 1's.
        for sequence in UInt32(1)...4 { node2.receive(0, sequence, by: 2, from: 9) }
        let runs = [node1.finish(of: 1), node2.finish(of: 1)]
        #expect(runs[0].summary.messages.lost == 10)
        #expect(runs[1].summary.messages.duplicated == 0 && runs[1].summary.messages.received == 14)
        #expect(runs[1].summary.ledger?.receivedByGenerator == ["7": 10, "9": 4])
        #expect(runs[1].summary.ledger?.crossed == 10)

        let merged = Self.merged(runs)
        #expect(merged.ledgerProblem == nil)
        let ledger = try #require(merged.summary.ledger)
        #expect(ledger.generators == [7, 9] && ledger.segmentCount == 2)
        #expect(ledger.sent == [10, 4] && ledger.received == [10, 4])
        #expect(ledger.delivered == 14 && ledger.lost == 0 && ledger.crossed == 10)
        #expect(merged.summary.messages.lost == 0)
        // The same key twice is two copies of one generator, not two generators.
        var copy = runs[1]
        copy.summary.ledger?.generator = 9
        #expect(Self.merged([runs[1], copy]).ledgerProblem == .generatorTwice(9))
        // Whole runs without keys (no shared --run-id) stay unreconciled, as before.
        var plain = runs
        for index in plain.indices { plain[index].summary.ledger?.generator = nil }
        #expect(Self.merged(plain).ledgerProblem == .segmentTwice(0))
    }
}
