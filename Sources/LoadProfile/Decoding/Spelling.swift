/// Did-you-mean for names the user typed: the candidate nearest by edit distance (Levenshtein),
/// when it is near enough to be a typo (at most max(2, a third of the word's length) edits).
enum Spelling {
    static func closest(to word: String, in candidates: [String]) -> String? {
        let scored = candidates.map { ($0, distance(word.lowercased(), $0.lowercased())) }.min { $0.1 < $1.1 }
        guard let (best, score) = scored, score <= max(2, word.count / 3) else { return nil }
        return best
    }

    /// Insertions, deletions and substitutions that turn `a` into `b`.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
