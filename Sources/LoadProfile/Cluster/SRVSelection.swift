/// The order in which a client tries SRV targets, as RFC 2782 prescribes: ascending priority; within
/// a priority, a weighted random order (records of weight 0 first in the list, then repeatedly: sum
/// the weights of the records left, draw a number 0...sum, take the first record whose running sum
/// reaches it). The randomness comes from the caller's generator, so a seeded generator gives a
/// reproducible order.
///
/// A single record with target "." means the service is not offered: the order is empty. ("." among
/// other records is skipped.)
public enum SRVSelection {
    public static func order<Generator: RandomNumberGenerator>(_ records: [SRVRecord], using generator: inout Generator) -> [SRVRecord] {
        if records.count == 1, records[0].isNoService { return [] }
        let usable = records.filter { !$0.isNoService }
        let priorities = Set(usable.map(\.priority)).sorted()
        var ordered: [SRVRecord] = []
        ordered.reserveCapacity(usable.count)
        for priority in priorities {
            let tier = usable.filter { $0.priority == priority }
            var left = tier.filter { $0.weight == 0 } + tier.filter { $0.weight != 0 }
            while !left.isEmpty {
                let sum = left.reduce(0) { $0 + Int($1.weight) }
                let draw = Int.random(in: 0...sum, using: &generator)
                var running = 0
                var chosen = left.count - 1
                for (index, record) in left.enumerated() {
                    running += Int(record.weight)
                    if running >= draw {
                        chosen = index
                        break
                    }
                }
                ordered.append(left.remove(at: chosen))
            }
        }
        return ordered
    }

    /// Whether the records say "no service" (exactly one record, target ".").
    public static func isNoService(_ records: [SRVRecord]) -> Bool {
        records.count == 1 && records[0].isNoService
    }
}
