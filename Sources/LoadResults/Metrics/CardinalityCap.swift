/// Bounds on how many distinct values a label that comes from the server may take in results
/// (error kinds, room JIDs), so a hostile or broken server cannot grow memory, `summary.json` or the
/// HTML report without bound.
///
/// Beyond the cap, a new value folds into `<prefix>-other`, where the prefix is the value up to its
/// first `-` (`message-<condition>` → `message-other`) or `other` when it has none; values already
/// present keep counting. The number of occurrences folded is counted per label family (`errors`,
/// `rooms`) in `IntervalSnapshot.folded` and the summary's `folded`. Applied by `MetricsRecorder` and
/// again when snapshots merge, so the cap holds for a whole run and across generators.
public enum CardinalityCap {
    /// Distinct error kinds kept (the `-other` keys come on top, at most one per prefix).
    public static let errorKinds = 200
    /// Distinct rooms kept.
    public static let rooms = 1_000

    /// The label family names used in `folded`.
    public static let errorsFamily = "errors"
    public static let roomsFamily = "rooms"

    /// The key `value` is counted under in a dictionary that already holds `count` keys and
    /// contains `value` (`present`): the value itself while under `cap`, else its `-other` key.
    public static func key(for value: String, present: Bool, count: Int, cap: Int) -> (key: String, folded: Bool) {
        if present || count < cap || isOther(value) {
            return (value, false)
        }
        return (otherKey(for: value), true)
    }

    /// `message-<condition>` → `message-other`; `other` for a value without `-`.
    public static func otherKey(for value: String) -> String {
        guard let dash = value.firstIndex(of: "-") else { return "other" }
        return value[..<dash] + "-other"
    }

    static func isOther(_ value: String) -> Bool {
        value == "other" || value.hasSuffix("-other")
    }

    /// Adds `amount` under `value` in `counts`, folding beyond `cap`; returns whether it was folded.
    @discardableResult
    public static func add<Value>(
        _ value: String, _ amount: Value, to counts: inout [String: Value], cap: Int,
        combine: (Value, Value) -> Value
    ) -> Bool {
        let (key, folded) = key(for: value, present: counts[value] != nil, count: counts.count, cap: cap)
        if let existing = counts[key] {
            counts[key] = combine(existing, amount)
        } else {
            counts[key] = amount
        }
        return folded
    }
}
