/// A binary min-heap of `(deadline, payload)` pairs ordered by deadline (ties in insertion order is
/// not promised). Pure value type: no clock, no event loop.
///
/// Used with lazy cancellation: nothing is ever removed except from the top, so `push` and `popDue`
/// are O(log n) and a cancelled timer costs nothing until its deadline passes. Storage is one array
/// of structs (no allocation per entry).
struct DeadlineHeap<Payload> {
    struct Entry {
        let deadline: Int64
        let payload: Payload
    }

    private(set) var entries: [Entry] = []

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }
    /// The earliest deadline, if any.
    var earliest: Int64? { entries.first?.deadline }

    mutating func push(deadline: Int64, payload: Payload) {
        entries.append(Entry(deadline: deadline, payload: payload))
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].deadline < entries[parent].deadline else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest entry if its deadline is at or before `now`.
    mutating func popDue(now: Int64) -> Entry? {
        guard let first = entries.first, first.deadline <= now else { return nil }
        let last = entries.removeLast()
        guard !entries.isEmpty else { return first }
        entries[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            guard left < entries.count else { break }
            let right = left + 1
            let smaller = right < entries.count && entries[right].deadline < entries[left].deadline ? right : left
            guard entries[smaller].deadline < entries[parent].deadline else { break }
            entries.swapAt(smaller, parent)
            parent = smaller
        }
        return first
    }
}
