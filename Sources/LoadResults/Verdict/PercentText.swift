// Reads a number written with an optional percent sign (`5%`, `0.1 %`, `1pp`): the one percentage
// parser of `capacity --resolution` and `compare`/`ab --tolerance`.

/// A number as written, with the percent sign (or percentage points) it carried, if any.
///
/// Contract: `parse` trims spaces and tabs, takes off one `%` suffix (or `pp` when asked for), trims
/// again and reads a finite decimal number; anything else is nil. What a bare number means is the
/// caller's choice: `fraction` reads it as a fraction (`0.05` = 5 %), `percent` as percent (`5` = 5 %).
public struct PercentText: Sendable, Equatable {
    /// How the number was written.
    public enum Sign: Sendable, Equatable {
        /// No sign: `0.05`, `5`.
        case bare
        /// `5%`.
        case percent
        /// `1pp`: percentage points (only when `parse` allows them).
        case points
    }

    /// The number as written (5 for `5%`).
    public var number: Double
    public var sign: Sign

    public init(number: Double, sign: Sign) {
        self.number = number
        self.sign = sign
    }

    /// Nil unless `text` is a finite number with at most one `%` (or `pp` when `points`) after it.
    public static func parse(_ text: String, points: Bool = false) -> PercentText? {
        var body = Self.trimmed(Substring(text))
        var sign = Sign.bare
        if body.hasSuffix("%") {
            body = Self.trimmed(body.dropLast())
            sign = .percent
        } else if points && body.hasSuffix("pp") {
            body = Self.trimmed(body.dropLast(2))
            sign = .points
        }
        guard !body.isEmpty, let number = Double(body), number.isFinite else { return nil }
        return PercentText(number: number, sign: sign)
    }

    /// As a fraction: `5%` is 0.05; a bare number already is one (`0.05`).
    public var fraction: Double { sign == .bare ? number : number / 100 }

    /// In percent (or points): `5%`, `5pp` and a bare `5` are all 5.
    public var percent: Double { number }

    private static func trimmed(_ text: Substring) -> Substring {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !isBlank($0) }), let last = text.lastIndex(where: { !isBlank($0) }) else { return "" }
        return text[first...last]
    }
}
