/// `summary.json`'s `ledger`: the message ledger's sends and distinct receipts per *sender segment*,
/// so `xmppload report DIR…` can reconcile the generators of a `--segment` run: a message sent by
/// generator A and received by generator B counts as delivered, not lost in A.
///
/// Sender ids are unique across the segments of a run (serial × N + i), so a sender's segment is its
/// id mod N. `sent[j]` counts messages sent by senders of segment j, `received[j]` the distinct
/// messages from senders of segment j that the covered generators received (duplicates excluded).
/// `segments` lists the segments whose generators this value covers: one for a generator's own
/// summary, several after merging. Merging adds element-wise and unites `segments`; it is associative
/// and commutative. Chat messages only: group chat is reconciled per room (`rooms`).
///
/// Generators that share a `--run-id` without `--segment` (each a whole run, `segment_count` 1) have
/// overlapping serials, so their stamps carry a generator key: each one's ledger names its key
/// (`generator`) and counts its distinct receipts by the sender's key (`received_by_generator`).
/// Merging such ledgers (each key once) gives one in the same shape, with one "segment" per
/// generator in the order given and `generators` listing their keys.
public struct SegmentLedger: Codable, Sendable, Equatable {
    /// N of `--segment i/N` (1 for a whole run).
    public var segmentCount: Int
    /// The segments covered, ascending, each once.
    public var segments: [Int]
    /// Messages sent per sender segment (length `segmentCount`).
    public var sent: [UInt64]
    /// Distinct messages received per sender segment (length `segmentCount`).
    public var received: [UInt64]
    /// Of `received`, those whose receiver is in another segment than their sender: messages that
    /// crossed generators.
    public var crossed: UInt64
    /// A whole-run generator sharing a `--run-id`: its stamp key (nil otherwise).
    public var generator: UInt32?
    /// With `generator`: distinct receipts by the sender's generator key (decimal), its own included.
    public var receivedByGenerator: [String: UInt64]?
    /// A merge of such generators: their keys, index i being "segment" i.
    public var generators: [UInt32]?

    enum CodingKeys: String, CodingKey {
        case segmentCount = "segment_count"
        case segments, sent, received, crossed, generator, generators
        case receivedByGenerator = "received_by_generator"
    }

    public init(segmentCount: Int, segments: [Int], sent: [UInt64], received: [UInt64], crossed: UInt64) {
        self.segmentCount = segmentCount
        self.segments = segments
        self.sent = sent
        self.received = received
        self.crossed = crossed
    }

    /// One generator's ledger: segment `index` of `count`, its `sent` messages (all from its own
    /// senders) and distinct receipts by sender key (`receivedBySender`: generator key in the high
    /// 32 bits, serial in the low ones), bucketed by serial mod `count`. `generator`: this
    /// generator's stamp key when it shares a `--run-id` without `--segment` (`count` is then 1).
    public init(segment index: Int, of count: Int, sent: UInt64, receivedBySender: [UInt64: UInt64], generator: UInt32? = nil) {
        precondition(count > 0 && index >= 0 && index < count, "segment index must be in 0..<count")
        var sentBySegment = [UInt64](repeating: 0, count: count)
        sentBySegment[index] = sent
        var receivedBySegment = [UInt64](repeating: 0, count: count)
        var byGenerator: [UInt32: UInt64] = [:]
        for (sender, receipts) in receivedBySender {
            receivedBySegment[Int(UInt32(truncatingIfNeeded: sender)) % count] += receipts
            byGenerator[UInt32(truncatingIfNeeded: sender >> 32), default: 0] += receipts
        }
        var crossed = receivedBySegment.reduce(0, +) - receivedBySegment[index]
        if let generator { crossed = byGenerator.reduce(0) { $1.key == generator ? $0 : $0 + $1.value } }
        self.init(
            segmentCount: count, segments: [index], sent: sentBySegment, received: receivedBySegment, crossed: crossed)
        if let generator {
            self.generator = generator
            receivedByGenerator = Dictionary(uniqueKeysWithValues: byGenerator.map { (String($0.key), $0.value) })
        }
    }

    /// Messages of the covered segments' senders that no covered generator received.
    public var lost: UInt64 {
        segments.reduce(0) { total, segment in
            total + (sent[segment] > received[segment] ? sent[segment] - received[segment] : 0)
        }
    }

    /// Distinct receipts of messages whose sender's segment is covered.
    public var delivered: UInt64 { segments.reduce(0) { $0 + min(received[$1], sent[$1]) } }

    /// Receipts from senders of segments not covered (their generator's directory was not given).
    public var receivedFromUncovered: UInt64 {
        (0..<segmentCount).reduce(0) { segments.contains($1) ? $0 : $0 + received[$1] }
    }

    /// Why a set of ledgers cannot be reconciled (they are not generators of one run, each once).
    public enum MergeProblem: Error, Equatable, Sendable, CustomStringConvertible {
        /// Directories of runs split differently (e.g. 2 and 3 segments, or a whole run among segments).
        case differentSegmentCounts([Int])
        /// The same segment appears in more than one directory.
        case segmentTwice(Int)
        /// A value whose arrays do not have `segment_count` entries.
        case malformed
        /// Two directories of generators sharing a `--run-id` carry the same generator key.
        case generatorTwice(UInt32)

        public var description: String {
            switch self {
            case .differentSegmentCounts(let counts):
                return "the directories were split into different segment counts (\(counts.map(String.init).joined(separator: ", ")))"
            case .segmentTwice(let segment): return "segment \(segment) appears in more than one directory"
            case .malformed: return "a ledger's sent/received do not have segment_count entries"
            case .generatorTwice(let key): return "generator \(key) appears in more than one directory"
            }
        }
    }

    /// All of `ledgers` as one (every generator of a run, each segment once); nil for none.
    public static func merged(_ ledgers: [SegmentLedger]) throws(MergeProblem) -> SegmentLedger? {
        guard var total = ledgers.first else { return nil }
        if ledgers.count > 1, ledgers.allSatisfy({ $0.segmentCount == 1 && $0.generator != nil }) {
            return try mergedGenerators(ledgers)
        }
        let counts = Set(ledgers.map(\.segmentCount))
        guard counts.count == 1 else { throw .differentSegmentCounts(counts.sorted()) }
        for ledger in ledgers where ledger.sent.count != ledger.segmentCount || ledger.received.count != ledger.segmentCount {
            throw .malformed
        }
        for ledger in ledgers.dropFirst() {
            for segment in ledger.segments where total.segments.contains(segment) { throw .segmentTwice(segment) }
            total.segments = (total.segments + ledger.segments).sorted()
            total.crossed += ledger.crossed
            for index in 0..<total.segmentCount {
                total.sent[index] += ledger.sent[index]
                total.received[index] += ledger.received[index]
            }
        }
        if let repeated = Self.firstRepeated(total.segments) { throw .segmentTwice(repeated) }
        return total
    }

    /// Whole-run generators that shared a `--run-id`: generator i's sends against every
    /// directory's receipts of its key.
    private static func mergedGenerators(_ ledgers: [SegmentLedger]) throws(MergeProblem) -> SegmentLedger {
        let keys = ledgers.compactMap(\.generator)
        var seen = Set<UInt32>()
        for key in keys where !seen.insert(key).inserted { throw .generatorTwice(key) }
        var received = [UInt64](repeating: 0, count: keys.count)
        var crossed: UInt64 = 0
        for ledger in ledgers {
            for (text, count) in ledger.receivedByGenerator ?? [:] {
                guard let key = UInt32(text), let index = keys.firstIndex(of: key) else { continue }
                received[index] += count
                if key != ledger.generator { crossed += count }
            }
        }
        var merged = SegmentLedger(
            segmentCount: keys.count, segments: Array(keys.indices), sent: ledgers.map { $0.sent.first ?? 0 }, received: received,
            crossed: crossed)
        merged.generators = keys
        return merged
    }

    private static func firstRepeated(_ sorted: [Int]) -> Int? {
        zip(sorted, sorted.dropFirst()).first { $0 == $1 }?.0
    }
}
